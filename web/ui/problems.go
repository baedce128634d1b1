package ui

import (
	"errors"
	"net/http"
	"sort"

	"atrium/app"
	"atrium/web/problem"
)

// The problem type pages (/problems, /problems/{code}): where the type URI of
// every problem response ({public_url}/problems/{code}) leads a person, with
// the status of the code and what it means (web/problem's Doc).

// problemType is a problem code on its page or in the list.
type problemType struct {
	Code   string
	Status int
	Doc    string
}

// problemsData is the list of problem types, or one (Code set).
type problemsData struct {
	problemType
	List []problemType
}

// problemIndex lists every problem type.
func (u *UI) problemIndex(w http.ResponseWriter, r *http.Request) {
	var list []problemType
	for code, st := range problem.Types() {
		list = append(list, problemType{Code: code, Status: st, Doc: problem.Doc(code)})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Code < list[j].Code })
	u.render(w, r, http.StatusOK, "problems", page{Title: "Problem types", Data: problemsData{List: list}})
}

// problemPage explains one problem type; an unknown one is a 404 problem.
func (u *UI) problemPage(w http.ResponseWriter, r *http.Request) {
	code := r.PathValue("code")
	st, ok := problem.Types()[code]
	if !ok {
		if problem.Doc(code) == "" {
			u.writeProblem(w, r, app.Errorf(app.ENotFound, "No such problem type."))
			return
		}
		st = http.StatusForbidden
	}
	u.render(w, r, http.StatusOK, "problems", page{Title: code, Data: problemsData{problemType: problemType{Code: code, Status: st, Doc: problem.Doc(code)}}})
}

// writeProblem answers err as the REST API does: an RFC 9457 problem (for
// the pages whose clients are scripts as much as people).
func (u *UI) writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	if u.cfg.WriteProblem != nil {
		u.cfg.WriteProblem(w, r, err)
		return
	}
	var e *app.Error
	if !errors.As(err, &e) {
		e = &app.Error{Code: app.EInternal, Message: app.ErrorMessage(err)}
	}
	st, _ := problem.Status(e.Code, nil)
	problem.Write(w, problem.Body{Type: u.cfg.PublicURL + "/problems/" + e.Code, Status: st, Detail: e.Message, Code: e.Code, RetryAfter: e.RetryAfter})
}
