// Command bareserver is the bare net/http server bench/requestpath.sh measures
// Atrium's REST path against: it answers every GET with the same bytes and
// headers Atrium gave (-body, -type), nothing else — no routing, logging or
// authentication.
//
//	bareserver -listen 127.0.0.1:8081 -body me.json -type application/json
package main

import (
	"flag"
	"log"
	"net/http"
	"os"
	"strconv"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8081", "address")
	bodyFile := flag.String("body", "", "file whose bytes every response carries")
	ctype := flag.String("type", "application/json", "Content-Type")
	flag.Parse()
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		log.Fatal(err)
	}
	size := strconv.Itoa(len(body))
	log.Fatal(http.ListenAndServe(*listen, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", *ctype)
		h.Set("Content-Length", size)
		w.Write(body)
	})))
}
