// Command s3bench is the client of bench/s3.sh (issue 50): the store's own
// client as the limit of a transfer, a tus upload in chunks, and many small
// WebDAV PUTs. Each subcommand prints one line of figures.
//
//	s3bench direct put|get ENDPOINT BUCKET ACCESS SECRET FILE
//	    PUT FILE as one object with minio-go (the client Atrium uses), or GET
//	    it back into FILE.got (fsynced): "direct <op> <bytes> <seconds>"
//	s3bench tus BASE TOKEN FILE CHUNK
//	    uploads FILE to Atrium with tus 1.0.0 in CHUNK-byte PATCHes:
//	    "tus <bytes> <seconds>"
//	s3bench davputs BASE USER PASSWORD N SIZE C
//	    N WebDAV PUTs of SIZE random bytes, C at a time, into a new folder:
//	    "davputs <n> <seconds> p50 <ms> p99 <ms>"
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: s3bench direct|tus|davputs ...")
	}
	switch os.Args[1] {
	case "direct":
		direct(os.Args[2:])
	case "tus":
		tus(os.Args[2:])
	case "davputs":
		davputs(os.Args[2:])
	default:
		fail("unknown subcommand " + os.Args[1])
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "s3bench:", msg)
	os.Exit(2)
}

func check(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func direct(a []string) {
	if len(a) != 6 {
		fail("usage: s3bench direct put|get ENDPOINT BUCKET ACCESS SECRET FILE")
	}
	op, endpoint, bucket, access, secret, path := a[0], a[1], a[2], a[3], a[4], a[5]
	u, err := url.Parse(endpoint)
	check(err)
	cl, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(access, secret, ""), Secure: u.Scheme == "https",
		BucketLookup: minio.BucketLookupPath, Region: "us-east-1"})
	check(err)
	ctx := context.Background()
	key := "bench/direct.bin"
	start := time.Now()
	var n int64
	switch op {
	case "put":
		f, err := os.Open(path)
		check(err)
		fi, err := f.Stat()
		check(err)
		info, err := cl.PutObject(ctx, bucket, key, f, fi.Size(), minio.PutObjectOptions{ContentType: "application/octet-stream"})
		check(err)
		f.Close()
		n = info.Size
	case "get":
		o, err := cl.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
		check(err)
		f, err := os.Create(path + ".got")
		check(err)
		n, err = io.Copy(f, o)
		check(err)
		check(f.Sync())
		check(f.Close())
		o.Close()
	default:
		fail("direct: put or get")
	}
	fmt.Printf("direct %s %d %.3f\n", op, n, time.Since(start).Seconds())
}

func tus(a []string) {
	if len(a) != 4 {
		fail("usage: s3bench tus BASE TOKEN FILE CHUNK")
	}
	base, token, path := a[0], a[1], a[2]
	chunk, err := strconv.ParseInt(a[3], 10, 64)
	check(err)
	f, err := os.Open(path)
	check(err)
	defer f.Close()
	fi, err := f.Stat()
	check(err)
	size := fi.Size()
	do := func(method, u string, body io.Reader, n int64, hdr map[string]string) *http.Response {
		req, err := http.NewRequest(method, u, body)
		check(err)
		req.ContentLength = n
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Tus-Resumable", "1.0.0")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		check(err)
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	start := time.Now()
	meta := "filename " + base64.StdEncoding.EncodeToString([]byte("tus-s3.bin"))
	res := do("POST", base+"/api/v1/drive/tus/", nil, 0, map[string]string{"Upload-Length": strconv.FormatInt(size, 10), "Upload-Metadata": meta})
	if res.StatusCode != 201 {
		fail("tus create: " + res.Status)
	}
	loc, err := res.Location()
	check(err)
	for off := int64(0); off < size; {
		n := min(chunk, size-off)
		res := do("PATCH", loc.String(), io.NewSectionReader(f, off, n), n, map[string]string{"Upload-Offset": strconv.FormatInt(off, 10),
			"Content-Type": "application/offset+octet-stream"})
		if res.StatusCode != 204 {
			fail("tus patch: " + res.Status)
		}
		off += n
	}
	fmt.Printf("tus %d %.3f\n", size, time.Since(start).Seconds())
}

func davputs(a []string) {
	if len(a) != 6 {
		fail("usage: s3bench davputs BASE USER PASSWORD N SIZE C")
	}
	base, user, pass := a[0], a[1], a[2]
	n, err := strconv.Atoi(a[3])
	check(err)
	size, err := strconv.Atoi(a[4])
	check(err)
	c, err := strconv.Atoi(a[5])
	check(err)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c}}
	req := func(method, u string, body []byte) int {
		r, err := http.NewRequest(method, u, bytes.NewReader(body))
		check(err)
		r.SetBasicAuth(user, pass)
		res, err := client.Do(r)
		check(err)
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	folder := base + "/webdav/s3bench-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if code := req("MKCOL", folder, nil); code != 201 {
		fail("MKCOL: " + strconv.Itoa(code))
	}
	bodies := make([][]byte, c)
	for i := range bodies {
		bodies[i] = make([]byte, size)
	}
	var next atomic.Int64
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range c {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				rand.Read(bodies[w]) // each file a content of its own: no deduplication
				t := time.Now()
				if code := req("PUT", fmt.Sprintf("%s/f-%05d.bin", folder, i), bodies[w]); code != 201 {
					fail("PUT: " + strconv.Itoa(code))
				}
				lat[i] = time.Since(t)
			}
		})
	}
	wg.Wait()
	total := time.Since(start)
	slices.Sort(lat)
	ms := func(q float64) float64 { return float64(lat[int(q*float64(n-1))].Microseconds()) / 1000 }
	fmt.Printf("davputs %d %.3f p50 %.2f p99 %.2f\n", n, total.Seconds(), ms(0.5), ms(0.99))
}
