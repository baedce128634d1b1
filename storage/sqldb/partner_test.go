package sqldb

import (
	"context"
	"testing"
)

// Migration 00027 makes the limit of invitations to the mail domain a setting
// of its own, off by default; an organisation that had set a mail domain
// before (and so had the limit) keeps it.
func TestRestrictInvitationsMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw, p := migrationsOn(t)
	if _, err := p.UpTo(ctx, 26); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `INSERT INTO organizations (id, name, slug, mail_domain, created_at, updated_at)
		VALUES ('o1', 'With', 'with', 'acme.test', 1, 1), ('o2', 'Without', 'without', '', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 27); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"o1": true, "o2": false} {
		var got bool
		if err := raw.QueryRowContext(ctx, `SELECT restrict_invitations FROM organizations WHERE id = ?`, id).Scan(&got); err != nil || got != want {
			t.Errorf("%s: restrict_invitations %v (%v), want %v", id, got, err, want)
		}
	}
	if _, err := raw.ExecContext(ctx, `INSERT INTO organizations (id, name, slug, mail_domain, created_at, updated_at) VALUES ('o3', 'New', 'new', 'x.test', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	var got bool
	if err := raw.QueryRowContext(ctx, `SELECT restrict_invitations FROM organizations WHERE id = 'o3'`).Scan(&got); err != nil || got {
		t.Errorf("a new organisation: restrict_invitations %v (%v), want false", got, err)
	}
	if _, err := p.DownTo(ctx, 26); err != nil {
		t.Fatal(err)
	}
}
