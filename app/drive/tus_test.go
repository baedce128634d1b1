package drive

import (
	"context"
	"testing"

	"atrium/app"
)

func TestTusUploadComplete(t *testing.T) {
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
		{"create needs drive:write", second(s.CreateTusUpload(ctx, reader, TusCreate{Name: "a"})), app.EInsufficientScope},
		{"create needs the drive feature", second(s.CreateTusUpload(ctx, noDrive, TusCreate{Name: "a"})), app.EFeatureNotInPlan},
		{"create needs a file name", second(s.CreateTusUpload(ctx, writer, TusCreate{Length: 1})), app.EValidation},
		{"create refuses a bad name", second(s.CreateTusUpload(ctx, writer, TusCreate{Name: "a/b", Length: 1})), app.EValidation},
		{"create refuses a negative length", second(s.CreateTusUpload(ctx, writer, TusCreate{Name: "a", Length: -1})), app.EValidation},
		{"create refuses more than the cap", second(s.CreateTusUpload(ctx, writer, TusCreate{Name: "a", Length: 11 << 30})), app.EPayloadTooLarge},
		{"resolve needs drive:write", second(s.ResolveTusUpload(ctx, reader, "x", StrategySkip)), app.EInsufficientScope},
		{"resolve knows three strategies", second(s.ResolveTusUpload(ctx, writer, "x", "merge")), app.EValidation},
		{"terminate needs drive:write", second(s.TerminateTusUpload(ctx, reader, "x")), app.EInsufficientScope},
		{"quota error", QuotaError(5), app.EQuotaExceeded},
	}
	for _, c := range cases {
		if got := app.ErrorCode(c.err); got != c.code {
			t.Errorf("%s: %v (code %q), want %s", c.name, c.err, got, c.code)
		}
	}
}

func second[T any](_ T, err error) error { return err }
