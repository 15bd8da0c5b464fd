// Package rateguard is a client of the rateguard sidecar, the process that
// runs next to each instance of a service and shares one rate limit per key
// with the other sidecars of the fleet. It asks the sidecar over HTTP/1.1 on
// loopback, on kept-alive connections, with the standard library only.
//
// A check gives up after Options.Timeout (50 ms by default); when the
// sidecar cannot answer, Options.OnFailure decides whether the check admits
// (FailOpen, the default), denies (FailClosed) or returns the error
// (FailError). A Client is safe for concurrent use; make one and share it.
package rateguard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// The defaults of Options, the same as the other clients'.
const (
	DefaultURL          = "http://127.0.0.1:7947"
	DefaultTimeout      = 50 * time.Millisecond
	DefaultAdminTimeout = 5 * time.Second
)

// The most a response body may hold: a check's answer is a few dozen bytes
// (a batch's, bounded by the sidecar's 64 KiB request, under 1 MiB); an
// admin listing grows with the key limits set. A longer body is a
// CodeBadResponse, never read whole into memory.
const (
	maxCheckResponseBytes = 1 << 20
	maxAdminResponseBytes = 64 << 20
)

// FailurePolicy decides what a check answers when the sidecar cannot be
// asked: it timed out, refused the connection, or answered 5xx.
type FailurePolicy string

const (
	// FailOpen admits the request; the Decision carries the failure.
	FailOpen FailurePolicy = "open"
	// FailClosed denies it, with a retry in a second.
	FailClosed FailurePolicy = "closed"
	// FailError returns the *ClientUnavailableError.
	FailError FailurePolicy = "error"
)

// closedRetry is what a FailClosed denial tells the caller to wait.
const closedRetry = time.Second

// Options configure a Client; the zero value of each field is its default.
type Options struct {
	// URL is the sidecar, http(s)://host:port; DefaultURL when empty.
	URL string
	// Timeout bounds a check, a batch or a peek; DefaultTimeout when zero.
	Timeout time.Duration
	// AdminTimeout bounds an admin call and the health probes;
	// DefaultAdminTimeout when zero.
	AdminTimeout time.Duration
	// OnFailure is what a check answers when the sidecar cannot be asked;
	// FailOpen when empty.
	OnFailure FailurePolicy
	// AdminToken is sent as "Authorization: Bearer" on the admin calls,
	// for a sidecar started with --admin-token-file; the whitespace around
	// it is trimmed.
	AdminToken string
	// OpsToken is sent as "Authorization: Bearer" on Refund, Reset and
	// Block, for a sidecar started with --ops-token-file; without it those
	// calls send the AdminToken, if any (an operator's client: its blocks
	// are the operator's, which a service's Reset does not lift).
	OpsToken string
	// HTTPClient sends the requests; when nil, the Client makes its own,
	// which keeps up to 64 idle connections to the sidecar alive and uses
	// no proxy (the sidecar is on loopback).
	HTTPClient *http.Client
}

// Client is a client of one sidecar. Every call takes a context: when it
// ends before the sidecar answers, the call returns its error (errors.Is
// with context.Canceled or context.DeadlineExceeded), whatever the failure
// policy, as it is the caller who gave up, not the sidecar who failed.
type Client struct {
	base         string
	timeout      time.Duration
	adminTimeout time.Duration
	onFailure    FailurePolicy
	auth         string
	opsAuth      string
	http         *http.Client
}

// NewClient returns a client of the sidecar that opts describe. It fails,
// wrapping ErrInvalidArgument, when the URL is not http(s)://host[:port],
// a timeout is negative, OnFailure is not one of its values, or AdminToken
// or OpsToken holds a space or a control character.
func NewClient(opts Options) (*Client, error) {
	raw := opts.URL
	if raw == "" {
		raw = DefaultURL
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.RawQuery != "" || u.Fragment != "" {
		return nil, invalid("URL must be http(s)://host:port, got %q", raw)
	}
	c := &Client{
		base:         strings.TrimRight(raw, "/"),
		timeout:      opts.Timeout,
		adminTimeout: opts.AdminTimeout,
		onFailure:    opts.OnFailure,
		http:         opts.HTTPClient,
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.adminTimeout == 0 {
		c.adminTimeout = DefaultAdminTimeout
	}
	if c.timeout < 0 || c.adminTimeout < 0 {
		return nil, invalid("timeouts must be positive, got Timeout %v, AdminTimeout %v",
			opts.Timeout, opts.AdminTimeout)
	}
	switch c.onFailure {
	case "":
		c.onFailure = FailOpen
	case FailOpen, FailClosed, FailError:
	default:
		return nil, invalid(`OnFailure must be "open", "closed" or "error", got %q`, opts.OnFailure)
	}
	// Trimmed, as the sidecar trims its token file: a token read from a
	// file may end in a newline.
	if c.auth, err = bearer("AdminToken", opts.AdminToken); err != nil {
		return nil, err
	}
	if c.opsAuth, err = bearer("OpsToken", opts.OpsToken); err != nil {
		return nil, err
	}
	if c.opsAuth == "" {
		c.opsAuth = c.auth
	}
	if c.http == nil {
		transport := &http.Transport{
			DialContext:         (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        64,
			MaxIdleConnsPerHost: 64, // the default, 2, would open a connection per check under load
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true, // the answers are small, and the sidecar does not compress
		}
		c.http = &http.Client{
			Transport: transport,
			// The sidecar never redirects: a 3xx is someone else answering.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return c, nil
}

// CloseIdleConnections closes the connections kept alive to the sidecar
// that carry no request now; the Client stays usable.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// request is one call to the sidecar.
type request struct {
	method string
	path   string // with its query
	body   any    // sent as JSON unless nil
	admin  bool
	ops    bool // refund, reset, block: the ops token
}

// send makes the request and reads the answer whole. Its errors are a
// *ClientUnavailableError (CodeTimeout or CodeUnreachable) or the caller's
// context ending.
func (c *Client) send(ctx context.Context, r request) (int, []byte, error) {
	timeout, limit := c.timeout, int64(maxCheckResponseBytes)
	if r.admin {
		timeout, limit = c.adminTimeout, maxAdminResponseBytes
	}
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if r.body != nil {
		payload, err := json.Marshal(r.body)
		if err != nil {
			return 0, nil, invalid("cannot encode the request: %v", err)
		}
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(callCtx, r.method, c.base+r.path, body)
	if err != nil {
		return 0, nil, invalid("cannot make the request: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth := c.authFor(r); auth != "" {
		req.Header.Set("Authorization", auth)
	}
	// A connection kept alive may be closed by the sidecar just as a request
	// goes out on it. Marked idempotent, the request is sent again on a new
	// connection when the old one closed before any answer (net/http's rule;
	// the nil value sends no header), as it is for a GET.
	req.Header["Idempotency-Key"] = nil
	where := c.where(r)
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, c.transportError(ctx, callCtx, where, timeout, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return 0, nil, c.transportError(ctx, callCtx, where, timeout, err)
	}
	if int64(len(data)) > limit {
		return 0, nil, c.badResponse(r, fmt.Sprintf("more than %d bytes", limit), nil)
	}
	return res.StatusCode, data, nil
}

// where names a request in messages, without its query (which holds keys).
func (c *Client) where(r request) string {
	return r.method + " " + c.base + strings.SplitN(r.path, "?", 2)[0]
}

func (c *Client) transportError(ctx, callCtx context.Context, where string, timeout time.Duration, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("rateguard sidecar: %s: %w", where, ctx.Err())
	}
	var cause error = err
	var ue *url.Error
	if errors.As(err, &ue) {
		cause = ue.Err
	}
	if errors.Is(callCtx.Err(), context.DeadlineExceeded) {
		return &ClientUnavailableError{Code: CodeTimeout, Err: err,
			Message: fmt.Sprintf("rateguard sidecar: no answer to %s within %v", where, timeout)}
	}
	return &ClientUnavailableError{Code: CodeUnreachable, Err: err,
		Message: fmt.Sprintf("rateguard sidecar: cannot reach %s: %v", where, cause)}
}

// call sends the request and decodes a 2xx answer into out (unless nil).
func (c *Client) call(ctx context.Context, r request, out any) error {
	status, data, err := c.send(ctx, r)
	if err == nil {
		err = c.refused(r, status, data)
	}
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return c.badResponse(r, "with a body that is not the JSON it sends", err)
	}
	return nil
}

// badResponse is a CodeBadResponse: the sidecar answered request r
// what, with err the decoding error, if any.
func (c *Client) badResponse(r request, what string, err error) *ClientUnavailableError {
	msg := fmt.Sprintf("rateguard sidecar: %s answered %s", c.where(r), what)
	if err != nil {
		msg += ": " + err.Error()
	}
	return &ClientUnavailableError{Code: CodeBadResponse, Message: msg, Err: err}
}

// refused is the error an answer other than 2xx stands for: a 4xx is a
// *ClientError, a 5xx (or anything else) a *ClientUnavailableError.
func (c *Client) refused(r request, status int, data []byte) error {
	switch {
	case status >= 200 && status <= 299:
		return nil
	case status >= 400 && status <= 499:
		return problemError(status, data)
	case status >= 500:
		return &ClientUnavailableError{Code: CodeServerError,
			Message: fmt.Sprintf("rateguard sidecar: %d from %s: %s", status, c.where(r), excerpt(data))}
	}
	return c.badResponse(r, fmt.Sprintf("%d", status), nil)
}

func problemError(status int, data []byte) *ClientError {
	e := &ClientError{Status: status}
	if json.Unmarshal(data, &e.Problem) != nil || e.Problem == nil {
		e.Problem = map[string]any{"detail": excerpt(data)}
	}
	e.Detail, _ = e.Problem["detail"].(string)
	e.Field, _ = e.Problem["field"].(string)
	e.Code, _ = e.Problem["code"].(string)
	if e.Detail == "" {
		e.Detail = http.StatusText(status)
	}
	return e
}

// excerpt is the start of a body, for an error message.
func excerpt(data []byte) string {
	if len(data) > 200 {
		data = data[:200]
	}
	return strings.ToValidUTF8(strings.TrimSpace(string(data)), "?")
}

// checkText refuses an empty key and text that is not valid UTF-8, which
// JSON would carry with replacement characters, making different keys one.
func checkText(what, text string, emptyOK bool) error {
	if text == "" && !emptyOK {
		return invalid("%s must be a non-empty string", what)
	}
	if !utf8.ValidString(text) {
		return invalid("%s must be valid UTF-8, got %q", what, text)
	}
	return nil
}

// authFor is the Authorization header of r: the admin token on an admin
// call, the ops token on an operation, none on a check.
func (c *Client) authFor(r request) string {
	switch {
	case r.admin:
		return c.auth
	case r.ops:
		return c.opsAuth
	}
	return ""
}

// bearer is the header value of a token option, trimmed as the sidecar
// trims its token file (a token read from a file may end in a newline);
// "" when it is empty.
func bearer(name, token string) (string, error) {
	token = strings.TrimSpace(token)
	if token == "" {
		return "", nil
	}
	if strings.IndexFunc(token, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return "", invalid("%s must hold no space or control character", name) // and is not shown
	}
	return "Bearer " + token, nil
}
