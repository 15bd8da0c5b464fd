module github.com/rateguard/guard/sdk/go

go 1.19
