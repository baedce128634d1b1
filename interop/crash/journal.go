package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// Rec is one line of the journal. The driver writes a "try" line (fsynced)
// before it sends a write and an "ack" line once the server answered 2xx, so
// the journal always over-approximates what the server may hold and exactly
// records what it promised.
type Rec struct {
	Op   string `json:"op"`   // try, ack, tus (an acknowledged PATCH or creation), sub
	Kind string `json:"kind"` // file, contact, event, webhook
	Key  string `json:"key"`  // file name, contact first name, event title
	ID   string `json:"id,omitempty"`
	// Hash is the fingerprint of the state written: the SHA-256 of a file's
	// bytes, or of a contact's or event's fields (see contactPrint, eventPrint).
	Hash   string `json:"hash,omitempty"`
	Size   int64  `json:"size,omitempty"`
	Via    string `json:"via,omitempty"`    // presigned, tus, webdav
	Parent string `json:"parent,omitempty"` // address book, calendar, WebDAV folder
	URL    string `json:"url,omitempty"`    // TUS upload URL
	Offset int64  `json:"offset,omitempty"` // acknowledged TUS offset
	Seed   uint64 `json:"seed,omitempty"`   // TUS content seed
	Secret string `json:"secret,omitempty"` // webhook signing secret
	Round  int    `json:"round"`
}

// Journal appends records durably.
type Journal struct {
	mu sync.Mutex
	f  *os.File
}

func openJournal(path string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	return &Journal{f: f}, nil
}

// Add writes r as one line and fsyncs it.
func (j *Journal) Add(r Rec) {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		fatalf("journal write: %v", err)
	}
	if err := j.f.Sync(); err != nil {
		fatalf("journal sync: %v", err)
	}
}

func (j *Journal) Close() error { return j.f.Close() }

// readJournal reads every complete line (a torn last line is ignored).
func readJournal(path string) ([]Rec, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	var out []Rec
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r Rec
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// Obj is what the journal says about one key.
type Obj struct {
	Kind, Key, Via, Parent string
	ID                     string
	Acked                  bool
	AckHash                string
	AckRound               int
	// Allowed are the states the server may hold: the last acknowledged one
	// and every one tried after it.
	Allowed map[string]bool
	// Tried are all states ever tried (for keys never acknowledged).
	Tried map[string]bool
	Size  int64
	// TUS
	URL       string
	AckOffset int64
	Seed      uint64
	LastRound int
}

// State folds the journal into one Obj per kind/key, in first-seen order.
type State struct {
	Objs  map[string]*Obj
	Order []string
	Sub   *Rec
	Round int // highest round seen
}

func objKey(kind, key string) string { return kind + "\x00" + key }

func fold(recs []Rec) *State {
	st := &State{Objs: map[string]*Obj{}}
	for _, r := range recs {
		st.Round = max(st.Round, r.Round)
		if r.Op == "sub" {
			rr := r
			st.Sub = &rr
			continue
		}
		k := objKey(r.Kind, r.Key)
		o := st.Objs[k]
		if o == nil {
			o = &Obj{Kind: r.Kind, Key: r.Key, Via: r.Via, Parent: r.Parent, Allowed: map[string]bool{}, Tried: map[string]bool{}}
			st.Objs[k] = o
			st.Order = append(st.Order, k)
		}
		o.LastRound = r.Round
		if r.ID != "" {
			o.ID = r.ID
		}
		switch r.Op {
		case "try":
			o.Tried[r.Hash] = true
			o.Allowed[r.Hash] = true
			if r.Size > 0 {
				o.Size = r.Size
			}
			if r.Seed != 0 {
				o.Seed = r.Seed
			}
		case "ack":
			o.Acked, o.AckHash, o.AckRound = true, r.Hash, r.Round
			o.Allowed = map[string]bool{r.Hash: true}
		case "tus":
			o.URL = r.URL
			o.AckOffset = max(o.AckOffset, r.Offset)
		}
	}
	return st
}

// loadJournal opens the journal for appending and folds what it holds so far.
func loadJournal() (*Journal, *State, error) {
	j, err := openJournal(journalPath())
	if err != nil {
		return nil, nil, err
	}
	recs, err := readJournal(journalPath())
	if err != nil {
		j.Close()
		return nil, nil, err
	}
	return j, fold(recs), nil
}
