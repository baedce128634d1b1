package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/web/problem"
)

// problemStatus returns the HTTP status of a domain error code: the table
// every door shares (package web/problem), as REST answers it.
func problemStatus(code string) (int, bool) { return problem.Status(code, nil) }

// ProblemCodes lists every problem code with its status, as the problem type
// pages (web/ui) do.
func ProblemCodes() map[string]int { return problem.Types() }

// Problem is an RFC 9457 problem body, as every error response of Atrium is.
type Problem struct {
	Type     string           `json:"type" doc:"URI of the problem type: {problems_url}/{code}."`
	Title    string           `json:"title" doc:"Short summary of the problem type."`
	Status   int              `json:"status" doc:"HTTP status code."`
	Detail   string           `json:"detail" doc:"Explanation of this occurrence."`
	Code     string           `json:"code" doc:"Machine-readable problem code." example:"precondition_failed"`
	Instance string           `json:"instance,omitempty" doc:"The request id of this occurrence."`
	Errors   []app.FieldError `json:"errors,omitempty" doc:"For validation_failed: the invalid inputs."`

	retryAfter int
}

func (p *Problem) Error() string  { return p.Detail }
func (p *Problem) GetStatus() int { return p.Status }

// ContentType makes huma send application/problem+json.
func (p *Problem) ContentType(ct string) string {
	if ct == "application/json" {
		return "application/problem+json"
	}
	return ct
}

// problems builds problem bodies with the server's problems URL.
type problems struct{ base string }

func (pb problems) make(status int, code, detail string) *Problem {
	if code == "" {
		code = problem.CodeOf(status)
	}
	return &Problem{Type: pb.base + "/" + code, Title: http.StatusText(status), Status: status, Detail: detail, Code: code}
}

// fromError turns any error into a problem: an *app.Error through the status
// table, anything else as an internal error whose detail stays in the logs.
func (pb problems) fromError(err error) *Problem {
	var pe *Problem
	if errors.As(err, &pe) {
		return pe
	}
	var ae *app.Error
	if errors.As(err, &ae) {
		status, _ := problemStatus(ae.Code)
		p := pb.make(status, ae.Code, ae.Message)
		p.Errors, p.retryAfter = ae.Fields, ae.RetryAfter
		if status == http.StatusServiceUnavailable && p.retryAfter == 0 {
			p.retryAfter = 1
		}
		return p
	}
	if errors.Is(err, context.DeadlineExceeded) {
		p := pb.make(http.StatusServiceUnavailable, app.ETimeout, "The request took longer than the server allows ([limits] request_timeout). Retry later, or narrow the request.")
		p.retryAfter = 1
		return p
	}
	return pb.make(http.StatusInternalServerError, app.EInternal, app.ErrorMessage(err))
}

// headers sets the headers a problem implies.
func (p *Problem) headers(h http.Header) {
	if p.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(p.retryAfter))
	}
	if p.Status == http.StatusUnauthorized && h.Get("WWW-Authenticate") == "" {
		h.Set("WWW-Authenticate", `Bearer realm="atrium"`)
	}
}

// write sends a problem response through web/problem's writer.
func (p *Problem) write(w http.ResponseWriter, requestID string) {
	if p.Instance == "" {
		p.Instance = problem.Instance(requestID)
	}
	p.headers(w.Header())
	problem.Write(w, p.body())
}

// body is the problem as web/problem's Body (without its Retry-After, which
// headers set).
func (p *Problem) body() problem.Body {
	return problem.Body{Type: p.Type, Title: p.Title, Status: p.Status, Detail: p.Detail, Code: p.Code, Instance: p.Instance, Errors: p.Errors}
}

// init makes huma produce our problem bodies: its validation errors become
// validation_failed with an errors array, a handler's *app.Error goes through the
// status table, and anything else is logged as internal. huma's hooks are global;
// the server of a request travels in its context.
func init() {
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		return (&Server{problems: problems{base: "/problems"}, log: slog.Default()}).humaProblem(nil, status, msg, errs...)
	}
	huma.NewErrorWithContext = func(ctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
		s, _ := ctx.Context().Value(serverKey{}).(*Server)
		if s == nil {
			return huma.NewError(status, msg, errs...)
		}
		return s.humaProblem(ctx, status, msg, errs...)
	}
}

type serverKey struct{}

func (s *Server) humaProblem(ctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
	for _, err := range errs {
		var ae *app.Error
		var pe *Problem
		if errors.As(err, &ae) || errors.As(err, &pe) || errors.Is(err, context.DeadlineExceeded) {
			if ctx != nil && errors.Is(err, context.DeadlineExceeded) {
				s.log.WarnContext(ctx.Context(), "request timed out", "err", err, "request_id", requestIDFrom(ctx.Context()))
			}
			p := s.problems.fromError(err)
			s.finishProblem(ctx, p)
			return p
		}
	}
	var fields []app.FieldError
	for _, err := range errs {
		if err == nil {
			continue
		}
		var d huma.ErrorDetailer
		if errors.As(err, &d) {
			ed := d.ErrorDetail()
			fields = append(fields, app.FieldError{Location: ed.Location, Message: friendlier(ed.Message), Value: ed.Value})
		} else if status != http.StatusInternalServerError {
			fields = append(fields, app.FieldError{Message: err.Error()})
		}
	}
	if status == http.StatusInternalServerError {
		if ctx != nil {
			s.log.ErrorContext(ctx.Context(), "request failed", "err", errors.Join(errs...), "request_id", requestIDFrom(ctx.Context()))
		}
		msg = app.ErrorMessage(nil)
		fields = nil
	}
	if status == http.StatusUnprocessableEntity && msg == "validation failed" && len(fields) > 0 {
		msg = "The request is not valid: " + describe(fields[0])
		if len(fields) > 1 {
			msg += " (and " + strconv.Itoa(len(fields)-1) + " more)"
		}
		msg += "."
	}
	if status == http.StatusRequestEntityTooLarge {
		msg = "The request body is larger than the 1 MiB allowed."
	}
	p := s.problems.make(status, "", msg)
	p.Errors = fields
	s.finishProblem(ctx, p)
	return p
}

func describe(f app.FieldError) string {
	if f.Location == "" {
		return f.Message
	}
	return f.Location + " " + f.Message
}

func (s *Server) finishProblem(ctx huma.Context, p *Problem) {
	if ctx == nil {
		return
	}
	if id := requestIDFrom(ctx.Context()); id != "" && p.Instance == "" {
		p.Instance = "urn:request:" + id
	}
	if p.retryAfter > 0 {
		ctx.SetHeader("Retry-After", strconv.Itoa(p.retryAfter))
	}
	if p.Status == http.StatusUnauthorized {
		ctx.SetHeader("WWW-Authenticate", `Bearer realm="atrium"`)
	}
}
