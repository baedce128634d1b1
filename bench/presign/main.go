// Command presign times many small three-step uploads into Atrium, for
// bench/smalluploads.sh (issue 21): N files of SIZE bytes, C at a time, into
// a fresh folder, each announced (POST /api/v1/drive/upload), PUT to its
// presigned upload_url and confirmed (POST /api/v1/drive/{id}/confirm), over
// keep-alive connections. A Go client, so that the client's own CPU weighs
// little beside the server's on a small machine.
//
// It prints one line: "presign <n> <seconds> <files/s> p50 <ms> p99 <ms>".
//
//	presign BASE TOKEN N SIZE C
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: presign BASE TOKEN N SIZE C")
		os.Exit(2)
	}
	base, token := os.Args[1], os.Args[2]
	n, err1 := strconv.Atoi(os.Args[3])
	size, err2 := strconv.Atoi(os.Args[4])
	c, err3 := strconv.Atoi(os.Args[5])
	if err1 != nil || err2 != nil || err3 != nil || n < 1 || size < 1 || c < 1 {
		fmt.Fprintln(os.Stderr, "presign: N, SIZE and C are positive numbers")
		os.Exit(2)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c * 2, DisableCompression: true}}
	call := func(method, url string, body any, out any) error {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, url, rd)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		if err != nil {
			return err
		}
		if res.StatusCode/100 != 2 {
			return fmt.Errorf("%s %s: %d %s", method, url, res.StatusCode, data)
		}
		if out != nil {
			return json.Unmarshal(data, out)
		}
		return nil
	}
	var folder struct {
		ID string `json:"id"`
	}
	if err := call("POST", base+"/api/v1/drive/folders", map[string]any{"name": fmt.Sprintf("presign-%d", time.Now().UnixNano())}, &folder); err != nil {
		fail(err)
	}
	one := func(i int) error {
		var t struct {
			UploadURL string `json:"upload_url"`
			File      struct {
				ID string `json:"id"`
			} `json:"file"`
		}
		err := call("POST", base+"/api/v1/drive/upload", map[string]any{"name": fmt.Sprintf("f%05d.bin", i), "parent_id": folder.ID,
			"size": size, "mime_type": "application/octet-stream"}, &t)
		if err != nil {
			return err
		}
		content := make([]byte, size)
		rand.Read(content)
		req, err := http.NewRequest("PUT", t.UploadURL, bytes.NewReader(content))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/octet-stream")
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode/100 != 2 {
			return fmt.Errorf("PUT upload %d: %d", i, res.StatusCode)
		}
		return call("POST", base+"/api/v1/drive/"+t.File.ID+"/confirm", nil, nil)
	}
	var next atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for range c {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				t0 := time.Now()
				if err := one(i); err != nil {
					fail(err)
				}
				mu.Lock()
				lat = append(lat, time.Since(t0))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	slices.Sort(lat)
	q := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	fmt.Printf("presign %d %.2f %.0f p50 %.2f p99 %.2f\n", n, secs, float64(n)/secs, q(0.5), q(0.99))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "presign:", err)
	os.Exit(1)
}
