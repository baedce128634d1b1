package wire

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"

	"atrium/app"
	"atrium/app/drive"
)

// demoFile is a file of the demo drive: its folder path, name, type and content.
type demoFile struct {
	folder, name, mime string
	content            func(owner string) []byte
}

var demoFiles = []demoFile{
	{"Documents", "Welcome.md", "text/markdown", func(owner string) []byte {
		return []byte("# Welcome to Atrium, " + owner + "\n\nThis drive is yours: upload with the web API, TUS or the WebDAV mount at `/webdav/`,\n" +
			"share files with colleagues or by link, and sync them with delta sync.\n")
	}},
	{"Documents", "Meeting notes.txt", "text/plain", func(string) []byte {
		return []byte("Quarterly planning\n- Budget review\n- Hiring plan\n- Office move in spring\n")
	}},
	{"Documents/Projects", "Roadmap.csv", "text/csv", func(string) []byte {
		return []byte("quarter,goal,owner\nQ1,Launch the drive,Alice\nQ2,Calendar sharing,Bob\nQ3,Mobile sync,Carol\n")
	}},
	{"Pictures", "Sunrise.png", "image/png", func(string) []byte { return demoPNG() }},
	{"Reports", "Annual report.pdf", "application/pdf", func(owner string) []byte { return demoPDF("Annual report of " + owner) }},
}

// seedDrive gives the demo users a folder tree with a few real files, once: a
// user whose drive already holds items is left alone. When the first user's
// (Alice's, the admin) is new, she shares some of it: her Projects folder with
// a team of the others (Product, for editing) and her Reports with the whole
// organisation, so that Shared with me shows each kind.
func seedDrive(ctx context.Context, m *Main, orgID string, quota int64) error {
	for i, in := range demoUsers {
		u, err := m.Identity.UserByEmail(ctx, in.Email)
		if err != nil {
			return fmt.Errorf("demo drive for %s: %w", in.Email, err)
		}
		p := &app.Principal{OrgID: orgID, UserID: u.ID, Email: u.Email, Scopes: app.NewScopes(app.ScopeDriveWrite),
			Features: []string{"drive"}, QuotaBytes: quota}
		root, err := m.Drive.Browse(ctx, p, "", drive.ListParams{PerPage: 1})
		if err != nil {
			return err
		}
		if root.Total > 0 {
			continue
		}
		folders := map[string]string{"": ""}
		for _, f := range demoFiles {
			parent := ""
			path := ""
			for _, part := range strings.Split(f.folder, "/") {
				path = strings.TrimPrefix(path+"/"+part, "/")
				id, ok := folders[path]
				if !ok {
					dir, err := m.Drive.CreateFolder(ctx, p, part, parent)
					if err != nil {
						return fmt.Errorf("demo folder %s: %w", path, err)
					}
					id = dir.ID
					folders[path] = id
				}
				parent = id
			}
			body := f.content(in.FirstName)
			if _, _, err := m.Drive.Put(ctx, p, drive.PutRequest{ParentID: parent, Name: f.name, MimeType: f.mime,
				Size: int64(len(body)), Body: bytes.NewReader(body)}); err != nil {
				return fmt.Errorf("demo file %s: %w", f.name, err)
			}
		}
		if i == 0 {
			if err := seedShares(ctx, m, p, folders); err != nil {
				return err
			}
		}
	}
	return nil
}

// seedShares makes the demo's team, Product (every demo user but the admin
// p), and p's shares: the Projects folder with the team, for editing, and the
// Reports folder with the organisation. folders are p's folders by path.
func seedShares(ctx context.Context, m *Main, p *app.Principal, folders map[string]string) error {
	admin := *p
	admin.Scopes = app.NewScopes(app.ScopeDriveWrite, app.ScopeAdmin)
	team, err := m.Partner.Admin().CreateTeam(ctx, &admin, "Product")
	if err != nil {
		return fmt.Errorf("demo team: %w", err)
	}
	for _, in := range demoUsers[1:] {
		u, err := m.Identity.UserByEmail(ctx, in.Email)
		if err != nil {
			return fmt.Errorf("demo team member %s: %w", in.Email, err)
		}
		if _, err := m.Partner.Admin().AddMember(ctx, &admin, team.ID, u.ID); err != nil {
			return fmt.Errorf("demo team member %s: %w", in.Email, err)
		}
	}
	for _, sh := range []struct {
		folder string
		req    drive.ShareRequest
	}{
		{"Documents/Projects", drive.ShareRequest{TeamID: team.ID, Permission: drive.PermEdit}},
		{"Reports", drive.ShareRequest{Organization: true, Permission: drive.PermView}},
	} {
		if _, err := m.Drive.CreateShare(ctx, &admin, folders[sh.folder], sh.req); err != nil {
			return fmt.Errorf("demo share of %s: %w", sh.folder, err)
		}
	}
	return nil
}

// demoPNG draws a small sunrise gradient.
func demoPNG() []byte {
	const w, h = 320, 200
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			sun := (x-160)*(x-160)+(y-150)*(y-150) < 40*40
			c := color.RGBA{R: uint8(255 - y/2), G: uint8(120 + y/3), B: uint8(60 + y/2), A: 255}
			if sun {
				c = color.RGBA{R: 255, G: 220, B: 80, A: 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

// demoPDF writes a one-page PDF showing title, with a correct cross-reference table.
func demoPDF(title string) []byte {
	text := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(title)
	stream := "BT /F1 24 Tf 72 720 Td (" + text + ") Tj ET"
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}
