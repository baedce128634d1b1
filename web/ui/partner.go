package ui

import (
	"cmp"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"atrium/app"
	"atrium/app/identity"
	"atrium/app/partner"
)

// The reseller console (/partner): a reseller's staff run its customer
// organisations. The pages read through the partner service (the methods the
// REST operations call) as the signed-in person; every change is made by
// assets/partner.js through the partner REST API (/api/v1/partner/...) with the
// session's anti-forgery token. A person who is not reseller staff gets 404.

// partnerPageSize is how many organisations a page of the list shows.
const partnerPageSize = 25

// partnerFetchLimit bounds what the pages read of one list (organisations,
// users, teams): they are sorted by name here, so they are read whole.
const partnerFetchLimit = 5000

// parsePartnerPages adds the console's templates to the pages.
func parsePartnerPages(pages map[string]*template.Template) {
	base := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html"))
	for _, name := range []string{"partner", "partner_org"} {
		pages[name] = template.Must(template.Must(base.Clone()).ParseFS(templateFS, "templates/"+name+".html"))
	}
}

// partnerOrgRow is a customer organisation in the list.
type partnerOrgRow struct {
	partner.Org
	PlanName  string
	UsedSeats int
}

// partnerListData is the list of customer organisations.
type partnerListData struct {
	Query  string
	Status string
	Orgs   []partnerOrgRow
	// Total counts the organisations matching over all pages.
	Total   int
	Page    int
	Pages   int
	PrevURL string
	NextURL string
	// Capped says the list holds only the first partnerFetchLimit matches.
	Capped bool
	Plans  []identity.Plan
	// Filtered is true when a search or status filter is applied.
	Filtered bool
}

// planLabel is a plan as a choice: its name and limits.
func planLabel(p identity.Plan) string {
	return fmt.Sprintf("%s (up to %d seats, %s storage)", p.Name, p.MaxSeats, humanBytes(p.QuotaBytes))
}

// partnerTeam is a team on its organisation's page, with its members.
type partnerTeam struct {
	partner.Team
	Members []partnerMember
}

// MembersLabel counts the members as a person reads it.
func (t partnerTeam) MembersLabel() string { return plural(t.MemberCount, "member", "members") }

// partnerMember is a member of a team, named as the users are.
type partnerMember struct{ partner.Member }

// DisplayName is the member's full name, or the e-mail address when there is none.
func (m partnerMember) DisplayName() string {
	u := identity.User{FirstName: m.FirstName, LastName: m.LastName, Email: m.Email}
	return u.DisplayName()
}

// PlanLabel names a plan of the choices.
func (partnerListData) PlanLabel(p identity.Plan) string { return planLabel(p) }

// readAll reads every item of a keyset-paged list (up to partnerFetchLimit);
// more reports whether there were more.
func readAll[T any](fetch func(app.PageRequest) ([]T, error), key func(T) string) (all []T, more bool, err error) {
	pr := app.PageRequest{Limit: 500}
	for {
		items, err := fetch(pr)
		if err != nil {
			return nil, false, err
		}
		next := len(items) > pr.Limit
		if next {
			items = items[:pr.Limit]
		}
		all = append(all, items...)
		if !next || len(items) == 0 {
			return all, false, nil
		}
		if len(all) >= partnerFetchLimit {
			return all[:partnerFetchLimit], true, nil
		}
		pr.After = key(items[len(items)-1])
	}
}

func (u *UI) partnerPlans(r *http.Request, v *viewer) ([]identity.Plan, error) {
	plans, _, err := readAll(func(pr app.PageRequest) ([]identity.Plan, error) { return u.cfg.Partner.Plans(r.Context(), v.P, pr) },
		func(p identity.Plan) string { return p.Slug })
	return plans, err
}

// partnerList shows the customer organisations, by name, searched and
// filtered by status.
func (u *UI) partnerList(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !v.IsResellerStaff() {
		u.fail(w, r, v, app.Errorf(app.ENotFound, "No such page."))
		return
	}
	q := r.URL.Query()
	d := partnerListData{Query: strings.TrimSpace(q.Get("q")), Status: q.Get("status")}
	if d.Status != identity.OrgActive && d.Status != identity.OrgSuspended {
		d.Status = ""
	}
	d.Filtered = d.Query != "" || d.Status != ""
	var errMsg string
	if len(d.Query) > 200 {
		errMsg, d.Query = "Search for at most 200 characters.", ""
	}
	ctx := r.Context()
	orgs, capped, err := readAll(func(pr app.PageRequest) ([]partner.Org, error) {
		return u.cfg.Partner.ListOrgs(ctx, v.P, partner.OrgFilter{Q: d.Query, Status: d.Status}, pr)
	}, func(o partner.Org) string { return o.ID })
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	if d.Plans, err = u.partnerPlans(r, v); err != nil {
		u.fail(w, r, v, err)
		return
	}
	names := map[string]string{}
	for _, p := range d.Plans {
		names[p.Slug] = p.Name
	}
	slices.SortStableFunc(orgs, func(a, b partner.Org) int {
		return cmp.Or(cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.ID, b.ID))
	})
	d.Capped, d.Total = capped, len(orgs)
	d.Pages = max(1, (d.Total+partnerPageSize-1)/partnerPageSize)
	d.Page, _ = strconv.Atoi(q.Get("page"))
	d.Page = min(max(d.Page, 1), d.Pages)
	for _, o := range orgs[(d.Page-1)*partnerPageSize : min(d.Page*partnerPageSize, d.Total)] {
		// The seats used are active users plus pending invitations (the
		// list's user count holds suspended users too).
		sub, err := u.cfg.Partner.Subscription(ctx, v.P, o.ID)
		if err != nil {
			u.fail(w, r, v, err)
			return
		}
		d.Orgs = append(d.Orgs, partnerOrgRow{Org: o, PlanName: cmp.Or(names[o.PlanSlug], o.PlanSlug), UsedSeats: sub.UsedSeats})
	}
	pageURL := func(n int) string {
		v := url.Values{}
		if d.Query != "" {
			v.Set("q", d.Query)
		}
		if d.Status != "" {
			v.Set("status", d.Status)
		}
		if n > 1 {
			v.Set("page", strconv.Itoa(n))
		}
		if len(v) == 0 {
			return "/partner"
		}
		return "/partner?" + v.Encode()
	}
	if d.Page > 1 {
		d.PrevURL = pageURL(d.Page - 1)
	}
	if d.Page < d.Pages {
		d.NextURL = pageURL(d.Page + 1)
	}
	u.render(w, r, http.StatusOK, "partner", page{Title: "Customers", V: v, Error: errMsg, Data: d})
}

// bar is one horizontal bar of use: a part of a whole, drawn in SVG.
type bar struct {
	// Label is the bar's text alternative.
	Label string
	// Parts are the filled segments, in order, in hundredths of the width.
	Parts []barPart
}

type barPart struct {
	X, W  float64
	Class string
}

// newBar draws values (each of class classes[i]) against total.
func newBar(label string, total float64, values []float64, classes []string) bar {
	b := bar{Label: label}
	x := 0.0
	for i, val := range values {
		wd := 0.0
		if total > 0 {
			wd = min(100-x, max(0, val/total*100))
		}
		if wd > 0 {
			b.Parts = append(b.Parts, barPart{X: x, W: wd, Class: classes[i]})
		}
		x += wd
	}
	return b
}

// partnerOrgData is one customer organisation's page.
type partnerOrgData struct {
	Org   partner.Org
	Sub   partner.OrgSubscription
	Plan  identity.Plan
	Plans []identity.Plan
	Users []identity.User
	// UsersCapped says Users holds only the first partnerFetchLimit users.
	UsersCapped bool
	Teams       []partnerTeam
	// Active, Invited and Suspended count the users by status; Floor is the
	// seat floor (active users plus pending invitations).
	Active, Invited, Suspended int
	Floor                      int
	FloorText                  string
	FreeSeats                  int
	SeatsBar, StorageBar       bar
	StorageUsed, Quota         string
	API                        string
}

// PlanLabel names a plan of the choices.
func (partnerOrgData) PlanLabel(p identity.Plan) string { return planLabel(p) }

// floorText explains the seat floor as a person reads it.
func floorText(active, invited int) string {
	users := plural(active, "active user", "active users")
	inv := plural(invited, "pending invitation", "pending invitations")
	return fmt.Sprintf("This organisation has %s and %s: seats can't go below %d.", users, inv, max(active+invited, 1))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// partnerOrg shows one customer organisation: details, status, users, teams
// and subscription.
func (u *UI) partnerOrg(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !v.IsResellerStaff() {
		u.fail(w, r, v, app.Errorf(app.ENotFound, "No such page."))
		return
	}
	ctx := r.Context()
	ps := u.cfg.Partner
	id := r.PathValue("id")
	org, err := ps.GetOrg(ctx, v.P, id)
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	d := partnerOrgData{Org: org, API: "/api/v1/partner/orgs/" + url.PathEscape(org.ID)}
	if d.Sub, err = ps.Subscription(ctx, v.P, id); err != nil {
		u.fail(w, r, v, err)
		return
	}
	if d.Plans, err = u.partnerPlans(r, v); err != nil {
		u.fail(w, r, v, err)
		return
	}
	d.Plan = identity.Plan{Slug: d.Sub.PlanSlug, Name: d.Sub.PlanSlug}
	for _, p := range d.Plans {
		if p.Slug == d.Sub.PlanSlug {
			d.Plan = p
		}
	}
	if d.Users, d.UsersCapped, err = readAll(func(pr app.PageRequest) ([]identity.User, error) { return ps.ListUsers(ctx, v.P, id, pr) },
		func(x identity.User) string { return x.ID }); err != nil {
		u.fail(w, r, v, err)
		return
	}
	slices.SortStableFunc(d.Users, func(a, b identity.User) int {
		return cmp.Compare(strings.ToLower(a.DisplayName()), strings.ToLower(b.DisplayName()))
	})
	for _, x := range d.Users {
		switch x.Status {
		case identity.UserActive:
			d.Active++
		case identity.UserInvited:
			d.Invited++
		case identity.UserSuspended:
			d.Suspended++
		}
	}
	if d.UsersCapped {
		// The page does not hold every user: the server's count is the floor.
		d.Active, d.Invited = d.Sub.UsedSeats, 0
	}
	d.Floor = max(d.Active+d.Invited, 1)
	d.FloorText = floorText(d.Active, d.Invited)
	d.FreeSeats = max(d.Sub.Seats-d.Sub.UsedSeats, 0)
	teams, _, err := readAll(func(pr app.PageRequest) ([]partner.Team, error) { return ps.ListTeams(ctx, v.P, id, pr) },
		func(t partner.Team) string { return t.ID })
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	slices.SortStableFunc(teams, func(a, b partner.Team) int { return cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	members, err := ps.TeamMembers(ctx, v.P, id)
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	for _, t := range teams {
		d.Teams = append(d.Teams, newPartnerTeam(t, members[t.ID]))
	}

	d.StorageUsed, d.Quota = humanBytes(d.Sub.StorageUsedBytes), humanBytes(d.Sub.QuotaBytes)
	d.SeatsBar = newBar(fmt.Sprintf("Seat use: %d of %d seats (%s, %s)", d.Sub.UsedSeats, d.Sub.Seats,
		plural(d.Active, "active user", "active users"), plural(d.Invited, "pending invitation", "pending invitations")),
		float64(max(d.Sub.Seats, d.Sub.UsedSeats)), []float64{float64(d.Active), float64(d.Invited)}, []string{"bar-active", "bar-invited"})
	pct := 0.0
	if d.Sub.QuotaBytes > 0 {
		pct = float64(d.Sub.StorageUsedBytes) / float64(d.Sub.QuotaBytes) * 100
	}
	d.StorageBar = newBar(fmt.Sprintf("Storage use: %s of %s (%.0f%%)", d.StorageUsed, d.Quota, pct),
		float64(d.Sub.QuotaBytes), []float64{float64(d.Sub.StorageUsedBytes)}, []string{"bar-storage"})
	u.render(w, r, http.StatusOK, "partner_org", page{Title: org.Name + " — Customers", V: v, Data: d})
}

// newPartnerTeam is team t with its members, by name.
func newPartnerTeam(t partner.Team, members []partner.Member) partnerTeam {
	pt := partnerTeam{Team: t}
	for _, m := range members {
		pt.Members = append(pt.Members, partnerMember{m})
	}
	slices.SortStableFunc(pt.Members, func(a, b partnerMember) int {
		return cmp.Compare(strings.ToLower(a.DisplayName()), strings.ToLower(b.DisplayName()))
	})
	return pt
}
