package drive

import (
	"context"
	"fmt"
	"testing"

	"atrium/app"
)

func TestTusUploadComplete(t *testing.T) {
	t.Parallel()
	cases := []struct {
		u    TusUpload
		want bool
	}{
		{TusUpload{Length: 10, Offset: 10}, true},
		{TusUpload{Length: 10, Offset: 9}, false},
		{TusUpload{Length: 0, Offset: 0}, true},
		{TusUpload{LengthDeferred: true, Offset: 0}, false},
	}
	for _, c := range cases {
		if got := c.u.Complete(); got != c.want {
			t.Errorf("%+v: Complete() = %v", c.u, got)
		}
	}
}

// The checks that come before any storage: scope, acting user, plan, name and
// strategy. (The rest is tested end to end in package web.)
func TestTusValidation(t *testing.T) {
	t.Parallel()
	s := NewService(nil, nil, nil, nil, nil, nil, nil, Options{})
	writer := &app.Principal{OrgID: "o", UserID: "u", Scopes: app.NewScopes(app.ScopeDriveWrite, app.ScopeDriveRead), Features: []string{"drive"}}
	reader := &app.Principal{OrgID: "o", UserID: "u", Scopes: app.NewScopes(app.ScopeDriveRead), Features: []string{"drive"}}
	noDrive := &app.Principal{OrgID: "o", UserID: "u", Scopes: app.NewScopes(app.ScopeDriveWrite)}
	ctx := context.Background()
	cases := []struct {
		name string
		err  error
		code string
	}{
		{"create needs drive:write", second(s.Uploads().CreateTusUpload(ctx, reader, TusCreate{Name: "a"})), app.EInsufficientScope},
		{"create needs the drive feature", second(s.Uploads().CreateTusUpload(ctx, noDrive, TusCreate{Name: "a"})), app.EFeatureNotInPlan},
		{"create needs a file name", second(s.Uploads().CreateTusUpload(ctx, writer, TusCreate{Length: 1})), app.EValidation},
		{"create refuses a bad name", second(s.Uploads().CreateTusUpload(ctx, writer, TusCreate{Name: "a/b", Length: 1})), app.EValidation},
		{"create refuses a negative length", second(s.Uploads().CreateTusUpload(ctx, writer, TusCreate{Name: "a", Length: -1})), app.EValidation},
		{"create refuses more than the cap", second(s.Uploads().CreateTusUpload(ctx, writer, TusCreate{Name: "a", Length: 11 << 30})), app.EPayloadTooLarge},
		{"resolve needs drive:write", second(s.Uploads().ResolveTusUpload(ctx, reader, "x", StrategySkip)), app.EInsufficientScope},
		{"resolve knows three strategies", second(s.Uploads().ResolveTusUpload(ctx, writer, "x", "merge")), app.EValidation},
		{"terminate needs drive:write", second(s.Uploads().TerminateTusUpload(ctx, reader, "x")), app.EInsufficientScope},
		{"quota error", QuotaError(5), app.EQuotaExceeded},
	}
	for _, c := range cases {
		if got := app.ErrorCode(c.err); got != c.code {
			t.Errorf("%s: %v (code %q), want %s", c.name, c.err, got, c.code)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// freshTus keeps at most freshTusMax uploads, the newest; take gives one once.
func TestFreshTus(t *testing.T) {
	t.Parallel()
	var f freshTus
	for i := range freshTusMax + 6 {
		f.put(TusUpload{ID: fmt.Sprint("u", i)})
	}
	if len(f.m) != freshTusMax || len(f.order) != freshTusMax {
		t.Fatalf("%d kept (%d in order), want %d", len(f.m), len(f.order), freshTusMax)
	}
	if _, ok := f.take("u5"); ok {
		t.Error("u5, among the oldest, was kept")
	}
	if u, ok := f.take("u6"); !ok || u.ID != "u6" {
		t.Errorf("take u6: %+v %v", u, ok)
	}
	if _, ok := f.take("u6"); ok {
		t.Error("u6 taken twice")
	}
	f.drop("u7", "u8")
	for _, id := range []string{"u7", "u8"} {
		if _, ok := f.take(id); ok {
			t.Errorf("%s dropped but kept", id)
		}
	}
	if _, ok := f.take(fmt.Sprint("u", freshTusMax+5)); !ok {
		t.Error("the newest is not kept")
	}
}
