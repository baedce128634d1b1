package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
)

// hooks starts the receiver the subscription has pointed at (down until now),
// replays the deliveries that exhausted their attempts meanwhile, and waits
// until every delivery of the subscription has arrived: each event at least
// once, correctly signed, and among them the creation of every event and file
// the journal says was acknowledged.
func hooks(ctx context.Context) error {
	recs, err := readJournal(journalPath())
	if err != nil {
		return err
	}
	st := fold(recs)
	if st.Sub == nil {
		return fmt.Errorf("no subscription in the journal")
	}
	sub := st.Sub

	type got struct {
		typ  string
		data map[string]any
	}
	var mu sync.Mutex
	received := map[string]got{} // by event id
	posts := 0
	ln, err := net.Listen("tcp", "127.0.0.1:"+cfg.HookPort)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ts := r.Header.Get("X-Service-Timestamp")
		mac := hmac.New(sha256.New, []byte(sub.Secret))
		mac.Write([]byte(ts + "."))
		mac.Write(body)
		want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
		if !hmac.Equal([]byte(want), []byte(r.Header.Get("X-Service-Signature-256"))) {
			fail("webhooks", "delivery %s: bad signature", r.Header.Get("X-Service-Delivery"))
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var e struct {
			ID   string         `json:"id"`
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(body, &e); err != nil || e.ID == "" || e.Type != r.Header.Get("X-Service-Event") {
			fail("webhooks", "delivery %s: body %.200s", r.Header.Get("X-Service-Delivery"), body)
		}
		mu.Lock()
		received[e.ID] = got{e.Type, e.Data}
		posts++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	type delivery struct {
		ID      string `json:"id"`
		EventID string `json:"event_id"`
		Type    string `json:"event_type"`
		Status  string `json:"status"`
	}
	list := func() ([]delivery, error) {
		var all []delivery
		cursor := ""
		for {
			p := "/api/v1/webhooks/subscriptions/" + sub.ID + "/deliveries?limit=100"
			if cursor != "" {
				p += "&cursor=" + url.QueryEscape(cursor)
			}
			r, err := do(ctx, call{Method: "GET", Path: p})
			if err != nil || r.Status != 200 {
				return nil, fmt.Errorf("list deliveries: %v %v", r, err)
			}
			var page struct {
				Items      []delivery `json:"items"`
				NextCursor string     `json:"next_cursor"`
				HasMore    bool       `json:"has_more"`
			}
			if err := r.decode(&page); err != nil {
				return nil, err
			}
			all = append(all, page.Items...)
			if !page.HasMore {
				return all, nil
			}
			cursor = page.NextCursor
		}
	}

	start := time.Now()
	deadline := start.Add(75 * time.Second)
	replayed := map[string]bool{}
	var ds []delivery
	for {
		if ds, err = list(); err != nil {
			return err
		}
		statuses := map[string]int{}
		missing := 0
		mu.Lock()
		for _, d := range ds {
			statuses[d.Status]++
			if _, ok := received[d.EventID]; !ok || d.Status != "successful" {
				missing++
			}
		}
		mu.Unlock()
		for _, d := range ds {
			if d.Status == "failed" && !replayed[d.ID] {
				r, err := do(ctx, call{Method: "POST", Path: "/api/v1/webhooks/subscriptions/" + sub.ID + "/deliveries/" + d.ID + "/replay"})
				if err != nil || r.Status != 200 {
					fail("webhooks", "replay %s: %v %v", d.ID, r, err)
				}
				replayed[d.ID] = true
			}
		}
		if missing == 0 {
			fmt.Printf("webhooks: %d deliveries (%d replayed after exhausting their attempts) arrived in %s, %d POSTs\n",
				len(ds), len(replayed), time.Since(start).Round(time.Second), posts)
			break
		}
		if time.Now().After(deadline) {
			fail("webhooks", "after %s, %d of %d deliveries have not arrived: statuses %v", time.Since(start).Round(time.Second), missing, len(ds), statuses)
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	counted("webhooks", len(ds))

	// Every delivered event and every acknowledged creation.
	mu.Lock()
	defer mu.Unlock()
	var lost []string
	for _, d := range ds {
		if _, ok := received[d.EventID]; !ok {
			lost = append(lost, fmt.Sprintf("%s %s (%s)", d.Type, d.EventID, d.Status))
		}
	}
	created := map[string]bool{}
	for _, g := range received {
		if g.typ == "calendar.event.created" {
			created[fmt.Sprint(g.data["event_id"])] = true
		}
		if g.typ == "drive.file.created" {
			created[fmt.Sprint(g.data["file_id"])] = true
		}
	}
	items, err := listing(ctx)
	if err != nil {
		return err
	}
	for _, k := range st.Order {
		o := st.Objs[k]
		if !o.Acked {
			continue
		}
		id := o.ID
		switch o.Kind {
		case "event":
		case "file":
			id = items[o.Parent+"/"+o.Key].ID
		default:
			continue
		}
		counted("webhooks", 1)
		if id == "" || !created[id] {
			lost = append(lost, fmt.Sprintf("no creation event of acknowledged %s %s (%s)", o.Kind, o.Key, id))
		}
	}
	sort.Strings(lost)
	if len(lost) > 0 {
		fail("webhooks", "%d events never arrived: %s", len(lost), strings.Join(lost, ", "))
	}
	return nil
}
