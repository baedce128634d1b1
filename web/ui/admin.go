package ui

import (
	"fmt"
	"net/http"
	"strings"
)

// The organisation admin's pages (/admin, /admin/teams, /admin/usage,
// /admin/audit). Users, teams and the audit log are shells that
// assets/admin.js fills through the REST API (/api/v1/admin/..., /api/v1/audit)
// with the session cookie and the page's anti-forgery token; plan and usage is
// rendered here from the same app service the REST API calls. A person who is
// not an admin of their organisation gets 404: the pages do not exist for them.

// adminData is what every admin page gets.
type adminData struct {
	// Section is the current item of the administration sub-navigation.
	Section string
	// Self is the admin's own user id (the page does not offer to suspend,
	// demote or delete it).
	Self string
	// Usage is the plan and usage page's.
	Usage *usageData
}

// admin wraps a page of the organisation's admins.
func (u *UI) admin(next func(http.ResponseWriter, *http.Request, *viewer)) http.HandlerFunc {
	return u.signed(func(w http.ResponseWriter, r *http.Request, v *viewer) {
		if !v.IsAdmin() || u.cfg.Partner == nil {
			u.render(w, r, http.StatusNotFound, "message", page{Title: "Not found", V: v, Error: "There is no such page."})
			return
		}
		next(w, r, v)
	})
}

func (u *UI) adminUsers(w http.ResponseWriter, r *http.Request, v *viewer) {
	u.render(w, r, http.StatusOK, "admin_users", page{Title: "Users", V: v, Data: adminData{Section: "users", Self: v.User.ID}})
}

func (u *UI) adminTeams(w http.ResponseWriter, r *http.Request, v *viewer) {
	u.render(w, r, http.StatusOK, "admin_teams", page{Title: "Teams", V: v, Data: adminData{Section: "teams", Self: v.User.ID}})
}

func (u *UI) adminAudit(w http.ResponseWriter, r *http.Request, v *viewer) {
	u.render(w, r, http.StatusOK, "admin_audit", page{Title: "Audit log", V: v, Data: adminData{Section: "audit", Self: v.User.ID}})
}

// usageData is the plan and usage page: two gauges and two bar charts.
type usageData struct {
	Plan         string
	Status       string
	Seats, Used  int
	SeatsPct     int
	StoragePct   int
	UsedBytes    string
	QuotaBytes   string
	Users, Types []usageBar
}

// usageBar is one bar of a chart: its label, figure and length (percent of
// the longest bar).
type usageBar struct {
	Label, Sub, Figure string
	Pct                int
}

// storageChartTop is how many users the storage chart names; the others are one bar.
const storageChartTop = 10

func (u *UI) adminUsage(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	as := u.cfg.Partner.Admin()
	sub, err := as.Subscription(ctx, v.P)
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	st, err := as.Storage(ctx, v.P, storageChartTop)
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	d := &usageData{Plan: planName(sub.PlanSlug), Status: sub.Status, Seats: sub.Seats, Used: sub.UsedSeats,
		SeatsPct: pct(int64(sub.UsedSeats), int64(sub.Seats)), StoragePct: pct(sub.StorageUsedBytes, sub.QuotaBytes),
		UsedBytes: bytesText(sub.StorageUsedBytes), QuotaBytes: bytesText(sub.QuotaBytes)}
	var max int64
	for _, us := range st.Users {
		max = max64(max, us.Bytes)
	}
	max = max64(max, st.OtherBytes)
	for _, us := range st.Users {
		name := strings.TrimSpace(us.FirstName + " " + us.LastName)
		label := us.Email
		if label == "" {
			label = "a deleted user"
		}
		d.Users = append(d.Users, usageBar{Label: label, Sub: name, Figure: bytesText(us.Bytes), Pct: pct(us.Bytes, max)})
	}
	if st.OtherUsers > 0 {
		d.Users = append(d.Users, usageBar{Label: fmt.Sprintf("Others (%d users)", st.OtherUsers), Figure: bytesText(st.OtherBytes), Pct: pct(st.OtherBytes, max)})
	}
	max = 0
	for _, t := range st.Types {
		max = max64(max, t.Bytes)
	}
	for _, t := range st.Types {
		d.Types = append(d.Types, usageBar{Label: typeName(t.MimeGroup), Figure: bytesText(t.Bytes), Sub: files(t.Files), Pct: pct(t.Bytes, max)})
	}
	u.render(w, r, http.StatusOK, "admin_usage", page{Title: "Plan and usage", V: v, Data: adminData{Section: "usage", Self: v.User.ID, Usage: d}})
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// pct is n of total in whole percent, at most 100 (0 without a total).
func pct(n, total int64) int {
	if total <= 0 || n <= 0 {
		return 0
	}
	p := int(n * 100 / total)
	if p == 0 {
		return 1 // a sliver shows that there is something
	}
	return min(p, 100)
}

// bytesText is a byte count for people (binary units).
func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

func files(n int64) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}

func planName(slug string) string {
	if slug == "" {
		return "No plan"
	}
	return strings.ToUpper(slug[:1]) + strings.ReplaceAll(slug[1:], "-", " ")
}

var typeNames = map[string]string{"image": "Images", "video": "Videos", "audio": "Audio", "document": "Documents",
	"spreadsheet": "Spreadsheets", "presentation": "Presentations", "pdf": "PDF", "archive": "Archives", "text": "Text", "other": "Other"}

func typeName(g string) string {
	if n, ok := typeNames[g]; ok {
		return n
	}
	return g
}
