package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/web/rest"
)

// maxIdempotentBody bounds the request body read to fingerprint a request.
const maxIdempotentBody = 1 << 20

func jsonEncode(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }

// idempotency implements Idempotency-Key (spec §7–8) for operations that declare
// it. The key is claimed in its own transaction (so a concurrent twin sees it in
// flight and gets 503); the handler then runs inside a transaction that also stores
// the response, so the resource and its replay commit together. A 4xx or 5xx
// response rolls back and releases the key.
func (s *Server) idempotency(ctx huma.Context, next func(huma.Context)) {
	key := ctx.Header("Idempotency-Key")
	if on, _ := ctx.Operation().Metadata[rest.MetaIdempotent].(bool); !on || key == "" || s.cfg.Idempotency == nil {
		next(ctx)
		return
	}
	if len(key) > 255 {
		s.writeHumaProblem(ctx, app.Invalid("header.Idempotency-Key", "must be at most 255 characters", nil))
		return
	}
	p := app.PrincipalFrom(ctx.Context())
	if p == nil {
		next(ctx)
		return
	}
	body, err := io.ReadAll(io.LimitReader(ctx.BodyReader(), maxIdempotentBody+1))
	if err != nil {
		s.writeHumaProblem(ctx, app.Errorf(app.EBadRequest, "The request body could not be read."))
		return
	}
	if len(body) > maxIdempotentBody {
		s.writeHumaProblem(ctx, app.Errorf(app.EPayloadTooLarge, "The request body is larger than the 1 MiB allowed."))
		return
	}
	u := ctx.URL()
	h := sha256.New()
	h.Write([]byte(ctx.Method() + " " + u.Path + "?" + u.RawQuery + "\n"))
	h.Write(body)
	fp := h.Sum(nil)

	rec, err := s.cfg.Idempotency.Claim(ctx.Context(), p.OrgID, key, app.IdempotencyPrincipal(p), fp)
	switch {
	case err != nil:
		s.writeHumaProblem(ctx, err)
		return
	case rec == nil: // ours
	case rec.Principal != app.IdempotencyPrincipal(p):
		// Another caller of the organisation holds this key: its response (or
		// its request still in flight) is none of this caller's business.
		s.writeHumaProblem(ctx, app.Errorf(app.EIdempotencyReused, "The Idempotency-Key was already used by another caller of this organisation; choose a different key."))
		return
	case rec.InFlight:
		s.writeHumaProblem(ctx, &app.Error{Code: app.EIdempotencyInFlight, Message: "A request with this Idempotency-Key is still in progress; retry shortly.", RetryAfter: 1})
		return
	case !bytes.Equal(rec.RequestHash, fp):
		s.writeHumaProblem(ctx, app.Errorf(app.EIdempotencyReused, "The Idempotency-Key was already used with a different request."))
		return
	default:
		for k, vs := range rec.Header {
			for _, v := range vs {
				ctx.AppendHeader(k, v)
			}
		}
		ctx.SetHeader("X-Idempotency-Replayed", "true")
		ctx.SetStatus(rec.Status)
		_, _ = ctx.BodyWriter().Write(rec.Body)
		return
	}

	rw := &recorder{humaCtx: ctx, header: http.Header{}, body: &bytes.Buffer{}, reqBody: body}
	errRollback := errors.New("rolled back: error response")
	txErr := s.cfg.Tx.InTx(ctx.Context(), func(txctx context.Context) error {
		// A transaction may run again (PostgreSQL's serialization
		// failures): each attempt records its own response.
		rw.ctx, rw.status, rw.header = txctx, 0, http.Header{}
		rw.body.Reset()
		next(rw)
		if rw.status == 0 {
			rw.status = http.StatusOK
		}
		if rw.status >= 400 {
			return errRollback
		}
		return s.cfg.Idempotency.Complete(txctx, p.OrgID, key, rw.status, rw.header, rw.body.Bytes())
	})
	if txErr != nil {
		// Errors are not kept: the same key can be used again with a corrected body.
		if rerr := s.cfg.Idempotency.Release(context.WithoutCancel(ctx.Context()), p.OrgID, key); rerr != nil {
			s.log.Error("release idempotency key", "err", rerr)
		}
		if !errors.Is(txErr, errRollback) {
			s.writeHumaProblem(ctx, txErr)
			return
		}
	}
	for k, vs := range rw.header {
		for _, v := range vs {
			ctx.AppendHeader(k, v)
		}
	}
	ctx.SetStatus(rw.status)
	_, _ = ctx.BodyWriter().Write(rw.body.Bytes())
}

// humaCtx lets recorder embed huma.Context and still define Context().
type humaCtx = huma.Context

// recorder is a huma.Context that buffers the response (and replays the request
// body already read) so it can be stored before it is sent.
type recorder struct {
	humaCtx
	ctx     context.Context
	header  http.Header
	status  int
	body    *bytes.Buffer
	reqBody []byte
}

func (r *recorder) Context() context.Context        { return r.ctx }
func (r *recorder) BodyReader() io.Reader           { return bytes.NewReader(r.reqBody) }
func (r *recorder) SetStatus(code int)              { r.status = code }
func (r *recorder) Status() int                     { return r.status }
func (r *recorder) SetHeader(name, value string)    { r.header.Set(name, value) }
func (r *recorder) AppendHeader(name, value string) { r.header.Add(name, value) }
func (r *recorder) BodyWriter() io.Writer           { return r.body }
