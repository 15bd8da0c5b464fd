package rateguard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
)

// LimitSpec is a limit to set: its text and, optionally, its burst.
type LimitSpec struct {
	// Limit is a count per period, such as "10/s", "1000/min", "5000/h" or "100/15min".
	Limit string `json:"limit"`
	// Burst is how many requests one sidecar admits back to back on top of
	// its share; 0 leaves it to the sidecar (a twentieth of the count).
	Burst int `json:"burst,omitempty"`
}

// LimitEntry is a class's limit, or its shadow, as the sidecar lists it.
type LimitEntry struct {
	// Class is the class; "" is the default class.
	Class string `json:"class"`
	// Limit is the count per period, such as "10/s".
	Limit string `json:"limit"`
	// Burst is the burst as it applies (in SetClasses and SetShadows, 0
	// leaves it to the sidecar).
	Burst int `json:"burst,omitempty"`
}

// KeyLimitEntry is one key's limit: a limit of its own (Limit, Burst) or
// the class it follows (Follows).
type KeyLimitEntry struct {
	// Class is the key's class.
	Class string `json:"class"`
	// Key is the key.
	Key string `json:"key"`
	// Limit is its own limit, or "" when it follows a class.
	Limit string `json:"limit,omitempty"`
	// Burst is its own burst, with Limit.
	Burst int `json:"burst,omitempty"`
	// Follows is the class whose limit it takes, or "".
	Follows string `json:"follows,omitempty"`
}

// KeyStats is how one key fares on this sidecar, over the last ten
// seconds or so.
type KeyStats struct {
	// RequestsPerSec is its requests a second, each weighted by its cost.
	RequestsPerSec float64 `json:"requestsPerSec"`
	// DeniedPerSec is its denials a second (in a dry run, would-be denials).
	DeniedPerSec float64 `json:"deniedPerSec"`
	// ShadowDeniedPerSec is what its shadow limit would deny, a second.
	ShadowDeniedPerSec float64 `json:"shadowDeniedPerSec"`
	// Share is the rate it is admitted at here now, a second, before the burst.
	Share float64 `json:"share"`
	// Limit is the limit it is held to, its own or its class's.
	Limit string `json:"limit"`
	// Shadow is its shadow limit, or "" when it has none.
	Shadow string `json:"shadow"`
	// BlockedForMs is how long it stays blocked (Block), ms; 0 when it is not.
	BlockedForMs float64 `json:"blockedForMs"`
}

func (c *Client) admin(ctx context.Context, method, path string, body, out any) error {
	return c.call(ctx, request{method: method, path: path, body: body, admin: true}, out)
}

// list makes an admin call that answers {field: [...]} and returns the
// list; an answer without it is a CodeBadResponse.
func list[T any](ctx context.Context, c *Client, method, path string, body any, field string) ([]T, error) {
	var out map[string]json.RawMessage
	r := request{method: method, path: path, body: body, admin: true}
	if err := c.call(ctx, r, &out); err != nil {
		return nil, err
	}
	var items []T
	if err := json.Unmarshal(out[field], &items); err != nil || items == nil {
		return nil, c.badResponse(r, "without a list of "+field, err)
	}
	return items, nil
}

// remove deletes what path names; false when the sidecar has none (404).
func (c *Client) remove(ctx context.Context, path string) (bool, error) {
	err := c.admin(ctx, "DELETE", path, nil, nil)
	var ce *ClientError
	if errors.As(err, &ce) && ce.Status == 404 && ce.Code == "" {
		return false, nil
	}
	return err == nil, err
}

// classQuery names a class in a query; text that is not UTF-8 is refused,
// as it is in a key.
func classQuery(class string) (string, error) {
	if err := checkText("class", class, true); err != nil {
		return "", err
	}
	return url.Values{"class": {class}}.Encode(), nil
}

func keyQuery(class, key string) (string, error) {
	if err := checkText("key", key, false); err != nil {
		return "", err
	}
	if err := checkText("class", class, true); err != nil {
		return "", err
	}
	return url.Values{"class": {class}, "key": {key}}.Encode(), nil
}

// Ready says whether the sidecar is ready: running, and joined to its
// fleet (or standalone). It is false while the sidecar joins or stops, and
// an error when the sidecar cannot be asked.
func (c *Client) Ready(ctx context.Context) (bool, error) {
	return c.probe(ctx, "/readyz")
}

// Healthy says whether the sidecar's guard runs; an error when the
// sidecar cannot be asked.
func (c *Client) Healthy(ctx context.Context) (bool, error) {
	return c.probe(ctx, "/healthz")
}

func (c *Client) probe(ctx context.Context, path string) (bool, error) {
	status, _, err := c.send(ctx, request{method: "GET", path: path, admin: true})
	if err != nil {
		return false, err
	}
	return status >= 200 && status <= 299, nil
}

// Stats returns the sidecar's stats (GET /v1/stats) as JSON: what it
// decided so far, and how it sees the fleet.
func (c *Client) Stats(ctx context.Context) (map[string]any, error) {
	var out map[string]any
	err := c.admin(ctx, "GET", "/v1/stats", nil, &out)
	return out, err
}

// KeyStats returns how one key fares on this sidecar; nil, with no error,
// when the sidecar keeps no state for it.
func (c *Client) KeyStats(ctx context.Context, key string, opts *KeyOptions) (*KeyStats, error) {
	if opts == nil {
		opts = &KeyOptions{}
	}
	query, err := keyQuery(opts.Class, key)
	if err != nil {
		return nil, err
	}
	var out struct {
		KeyStats
		Shadow *string `json:"shadow"`
	}
	err = c.admin(ctx, "GET", "/v1/keys?"+query, nil, &out)
	var ce *ClientError
	if errors.As(err, &ce) && ce.Status == 404 && ce.Code == "" {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if out.Shadow != nil {
		out.KeyStats.Shadow = *out.Shadow
	}
	return &out.KeyStats, nil
}

// Metrics returns the sidecar's metrics, rateguard_*, as Prometheus text.
func (c *Client) Metrics(ctx context.Context) (string, error) {
	r := request{method: "GET", path: "/metrics", admin: true}
	status, data, err := c.send(ctx, r)
	if err == nil {
		err = c.refused(r, status, data)
	}
	if err != nil {
		return "", err
	}
	return string(data), nil
}

// Classes returns every class with its limit, the default class ("") first.
func (c *Client) Classes(ctx context.Context) ([]LimitEntry, error) {
	return list[LimitEntry](ctx, c, "GET", "/v1/classes", nil, "classes")
}

// SetClass adds or changes a class; "" is the default class.
func (c *Client) SetClass(ctx context.Context, name string, limit LimitSpec) error {
	query, err := classQuery(name)
	if err != nil {
		return err
	}
	return c.admin(ctx, "PUT", "/v1/classes?"+query, limit, nil)
}

// SetClasses replaces every class at once, or none (the default class is
// changed when it is among them, and kept when not), and returns the
// classes as they now are.
func (c *Client) SetClasses(ctx context.Context, classes []LimitEntry) ([]LimitEntry, error) {
	return replace(ctx, c, "/v1/classes", "classes", classes)
}

// RemoveClass removes a class; false when there was none of that name.
func (c *Client) RemoveClass(ctx context.Context, name string) (bool, error) {
	query, err := classQuery(name)
	if err != nil {
		return false, err
	}
	return c.remove(ctx, "/v1/classes?"+query)
}

// KeyLimits returns every key limit.
func (c *Client) KeyLimits(ctx context.Context) ([]KeyLimitEntry, error) {
	return list[KeyLimitEntry](ctx, c, "GET", "/v1/key-limits", nil, "keyLimits")
}

// SetKeyLimit gives one key a limit of its own, in the class opts names
// (nil: the default class).
func (c *Client) SetKeyLimit(ctx context.Context, key string, limit LimitSpec, opts *KeyOptions) error {
	query, err := keyQuery(classOf(opts), key)
	if err != nil {
		return err
	}
	return c.admin(ctx, "PUT", "/v1/key-limits?"+query, limit, nil)
}

// SetKeyLimitFollows gives one key, in the class opts names (nil: the
// default class), the limit of another class, follows, which must exist.
func (c *Client) SetKeyLimitFollows(ctx context.Context, key, follows string, opts *KeyOptions) error {
	query, err := keyQuery(classOf(opts), key)
	if err == nil {
		err = checkText("follows", follows, true)
	}
	if err != nil {
		return err
	}
	return c.admin(ctx, "PUT", "/v1/key-limits?"+query, map[string]string{"follows": follows}, nil)
}

// SetKeyLimits replaces every key limit at once, or none, and returns them
// as they now are.
func (c *Client) SetKeyLimits(ctx context.Context, limits []KeyLimitEntry) ([]KeyLimitEntry, error) {
	return replace(ctx, c, "/v1/key-limits", "keyLimits", limits)
}

// RemoveKeyLimit removes a key's own limit, in the class opts names (nil:
// the default class); false when it had none.
func (c *Client) RemoveKeyLimit(ctx context.Context, key string, opts *KeyOptions) (bool, error) {
	query, err := keyQuery(classOf(opts), key)
	if err != nil {
		return false, err
	}
	return c.remove(ctx, "/v1/key-limits?"+query)
}

// Shadows returns every shadow limit: what would be denied under another
// limit, counted, never enforced.
func (c *Client) Shadows(ctx context.Context) ([]LimitEntry, error) {
	return list[LimitEntry](ctx, c, "GET", "/v1/shadows", nil, "shadows")
}

// SetShadow gives a class a shadow limit.
func (c *Client) SetShadow(ctx context.Context, class string, limit LimitSpec) error {
	query, err := classQuery(class)
	if err != nil {
		return err
	}
	return c.admin(ctx, "PUT", "/v1/shadows?"+query, limit, nil)
}

// SetShadows replaces every shadow limit at once, or none, and returns
// them as they now are.
func (c *Client) SetShadows(ctx context.Context, shadows []LimitEntry) ([]LimitEntry, error) {
	return replace(ctx, c, "/v1/shadows", "shadows", shadows)
}

// RemoveShadow removes a class's shadow limit; false when it had none.
func (c *Client) RemoveShadow(ctx context.Context, class string) (bool, error) {
	query, err := classQuery(class)
	if err != nil {
		return false, err
	}
	return c.remove(ctx, "/v1/shadows?"+query)
}

// DryRun says whether the sidecar runs dry: admitting every request,
// counting what it would deny.
func (c *Client) DryRun(ctx context.Context) (bool, error) {
	var out struct {
		DryRun *bool `json:"dryRun"`
	}
	r := request{method: "GET", path: "/v1/dry-run", admin: true}
	if err := c.call(ctx, r, &out); err != nil {
		return false, err
	}
	if out.DryRun == nil {
		return false, c.badResponse(r, "without dryRun", nil)
	}
	return *out.DryRun, nil
}

// SetDryRun turns the dry run on or off.
func (c *Client) SetDryRun(ctx context.Context, on bool) error {
	return c.admin(ctx, "PUT", "/v1/dry-run", map[string]bool{"dryRun": on}, nil)
}

// entry is an item of a collection, and the text in it.
type entry interface {
	LimitEntry | KeyLimitEntry
	texts() []string
}

func (e LimitEntry) texts() []string    { return []string{e.Class, e.Limit} }
func (e KeyLimitEntry) texts() []string { return []string{e.Class, e.Key, e.Limit, e.Follows} }

// replace puts a whole collection, {field: items}, all or nothing, and
// returns it as the sidecar now has it. No items is sent as [] (none),
// not null, which the sidecar refuses.
func replace[T entry](ctx context.Context, c *Client, path, field string, items []T) ([]T, error) {
	if items == nil {
		items = []T{}
	}
	for i, item := range items {
		for _, text := range item.texts() {
			if err := checkText(fmt.Sprintf("%s[%d]", field, i), text, true); err != nil {
				return nil, err
			}
		}
	}
	return list[T](ctx, c, "PUT", path, map[string]any{field: items}, field)
}

// classOf is the class opts names: "" (the default class) for nil.
func classOf(opts *KeyOptions) string {
	if opts == nil {
		return ""
	}
	return opts.Class
}
