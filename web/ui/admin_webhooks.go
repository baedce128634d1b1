package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/identity"
	"atrium/app/webhooks"
)

// The administration pages of outgoing webhooks (/admin/webhooks, one
// subscription's deliveries at /admin/webhooks/{id}) and of service principals
// (/admin/principals). The pages read through the app services; every change
// is made by assets/webhooks.js through the REST API with the session cookie.

// eventGroup is the catalog's event types of one module, for the event picker.
type eventGroup struct {
	Module string
	Events []string
}

// moduleNames name the modules of the event catalog (the part before the first dot).
var moduleNames = map[string]string{
	"drive": "Files", "sites": "Sites", "organization": "Organisation", "calendar": "Calendar", "contacts": "Contacts",
}

// eventGroups groups the catalog by module, in catalog order.
func eventGroups() []eventGroup {
	var out []eventGroup
	for _, e := range webhooks.Catalog() {
		mod, _, _ := strings.Cut(e, ".")
		name := moduleNames[mod]
		if name == "" {
			name = mod
		}
		if len(out) == 0 || out[len(out)-1].Module != name {
			out = append(out, eventGroup{Module: name})
		}
		out[len(out)-1].Events = append(out[len(out)-1].Events, e)
	}
	return out
}

// hookRow is a subscription with its most recent delivery.
type hookRow struct {
	webhooks.Subscription
	Last *webhooks.Delivery
}

type webhooksData struct {
	Section string
	Hooks   []hookRow
	Groups  []eventGroup
}

func (u *UI) adminWebhooks(w http.ResponseWriter, r *http.Request, v *viewer) {
	ws := u.cfg.Webhooks
	if ws == nil {
		u.fail(w, r, v, app.Errorf(app.ENotFound, "Webhooks are not available on this server."))
		return
	}
	ctx := r.Context()
	subs, err := ws.List(ctx, v.P, app.PageRequest{Limit: listLimit})
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	d := webhooksData{Section: "webhooks", Groups: eventGroups()}
	for _, s := range subs {
		row := hookRow{Subscription: s}
		last, err := ws.Deliveries(ctx, v.P, s.ID, app.PageRequest{Limit: 1})
		if err != nil {
			u.fail(w, r, v, err)
			return
		}
		if len(last) > 0 {
			row.Last = &last[0]
		}
		d.Hooks = append(d.Hooks, row)
	}
	u.render(w, r, http.StatusOK, "webhooks", page{Title: "Webhooks", V: v, Data: d})
}

// deliveryLimit is how many of a subscription's most recent deliveries the page
// lists (its chart counts every attempt of the last chartDays days).
const deliveryLimit = 200

// chartDays is how many days the delivery chart shows, today included.
const chartDays = 7

// chartBar is one day of the delivery chart, with its geometry in the SVG's
// coordinates (viewBox 0 0 chartW chartH).
type chartBar struct {
	Day                  string // e.g. "Mon 23"
	Date                 string // 2006-01-02
	Succeeded, Failed    int
	X, W                 int
	OkY, OkH, BadY, BadH int
	LabelX               int
}

type deliveryChart struct {
	Bars       []chartBar
	Max        int
	Total      int
	Summary    string
	W, H, Base int
}

const (
	chartW    = 420
	chartH    = 180
	chartBase = 152 // the bars' baseline; day labels below it
	chartTop  = 12
)

// chartSince is the first instant the delivery chart counts: 00:00 UTC
// chartDays-1 days before now's day.
func chartSince(now time.Time) time.Time {
	return now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -(chartDays - 1))
}

// buildChart lays out the attempts per UTC day (AttemptsByDay since
// chartSince(now)) over the last chartDays days: answered 2xx (succeeded) or
// not (failed).
func buildChart(days []webhooks.DayAttempts, now time.Time) deliveryChart {
	first := chartSince(now)
	c := deliveryChart{W: chartW, H: chartH, Base: chartBase}
	c.Bars = make([]chartBar, chartDays)
	for i := range c.Bars {
		day := first.AddDate(0, 0, i)
		c.Bars[i].Day, c.Bars[i].Date = day.Format("Mon 2"), day.Format("2006-01-02")
	}
	for _, d := range days {
		i := int(d.Day.UTC().Sub(first) / (24 * time.Hour))
		if d.Day.Before(first) || i < 0 || i >= chartDays {
			continue
		}
		c.Bars[i].Succeeded += d.Succeeded
		c.Bars[i].Failed += d.Failed
		c.Total += d.Succeeded + d.Failed
	}
	for _, b := range c.Bars {
		c.Max = max(c.Max, b.Succeeded+b.Failed)
	}
	slot := chartW / chartDays
	scale := float64(chartBase-chartTop) / float64(max(c.Max, 1))
	var parts []string
	for i := range c.Bars {
		b := &c.Bars[i]
		b.W = slot * 6 / 10
		b.X = i*slot + (slot-b.W)/2
		b.LabelX = i*slot + slot/2
		b.OkH = int(float64(b.Succeeded)*scale + .5)
		b.BadH = int(float64(b.Failed)*scale + .5)
		b.OkY = chartBase - b.OkH
		b.BadY = b.OkY - b.BadH
		parts = append(parts, fmt.Sprintf("%s: %d succeeded, %d failed", b.Day, b.Succeeded, b.Failed))
	}
	c.Summary = "Delivery attempts per day, last 7 days (UTC). " + strings.Join(parts, "; ") + "."
	return c
}

type webhookData struct {
	Section    string
	Hook       webhooks.Subscription
	Deliveries []webhooks.Delivery
	Chart      deliveryChart
	Limit      int
	More       bool // older deliveries than the Limit listed exist
}

func (u *UI) adminWebhook(w http.ResponseWriter, r *http.Request, v *viewer) {
	ws := u.cfg.Webhooks
	if ws == nil {
		u.fail(w, r, v, app.Errorf(app.ENotFound, "Webhooks are not available on this server."))
		return
	}
	ctx := r.Context()
	sub, err := ws.Get(ctx, v.P, r.PathValue("id"))
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	ds, err := ws.Deliveries(ctx, v.P, sub.ID, app.PageRequest{Limit: deliveryLimit})
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	more := len(ds) > deliveryLimit
	if more {
		ds = ds[:deliveryLimit]
	}
	for i := range ds {
		for j := range ds[i].AttemptLog {
			a := &ds[i].AttemptLog[j]
			a.RequestBody = indentJSON(a.RequestBody)
		}
	}
	now := time.Now()
	days, err := ws.AttemptsByDay(ctx, v.P, sub.ID, chartSince(now))
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	d := webhookData{Section: "webhooks", Hook: sub, Deliveries: ds, Chart: buildChart(days, now), Limit: deliveryLimit, More: more}
	u.render(w, r, http.StatusOK, "webhook", page{Title: "Webhook deliveries", V: v, Data: d})
}

// principalRow is a service principal with its tokens.
type principalRow struct {
	identity.ServicePrincipal
	Tokens []identity.SPToken
}

type principalsData struct {
	Section    string
	Principals []principalRow
	// Scopes are those a new principal may have: the admin's own.
	Scopes []string
	TTLs   []ttlOption
}

func (u *UI) adminPrincipals(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	ids := u.cfg.Identity
	sps, err := ids.ServicePrincipals(ctx, v.P, app.PageRequest{Limit: listLimit})
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	d := principalsData{Section: "principals", TTLs: ttlChoices}
	for _, sp := range sps {
		toks, err := ids.SPTokens(ctx, v.P, sp.ID, app.PageRequest{Limit: listLimit})
		if err != nil {
			u.fail(w, r, v, err)
			return
		}
		d.Principals = append(d.Principals, principalRow{ServicePrincipal: sp, Tokens: toks})
	}
	for _, sc := range app.AllScopes() {
		if v.P.Scopes.Has(sc) {
			d.Scopes = append(d.Scopes, sc)
		}
	}
	slices.Sort(d.Scopes)
	u.render(w, r, http.StatusOK, "principals", page{Title: "Service principals", V: v, Data: d})
}

// indentJSON returns a JSON body indented for reading, or s as it is when it
// is not JSON.
func indentJSON(s string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(s), "", "  "); err != nil {
		return s
	}
	return b.String()
}
