.PHONY: build test interop bench lint

build:
	CGO_ENABLED=0 go build -trimpath -o bin/atrium ./cmd/atrium

test:
	go test ./...

interop: build
	bash interop/run.sh bin/atrium

bench:
	bash bench/foundation.sh
	go test -run '^$$' -bench . -benchtime 2s ./app/...

lint:
	gofmt -l . && go vet ./...
