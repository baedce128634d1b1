package drive

import (
	"context"
	"testing"
	"time"

	"atrium/app"
)

func TestRestoreProgress(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	job := func(size, done int64) *restoreJob {
		j := &restoreJob{size: size, started: start}
		j.done.Store(done)
		return j
	}
	at := func(d time.Duration) *time.Time { t := start.Add(d); return &t }
	for _, c := range []struct {
		name     string
		status   string
		job      *restoreJob
		finished time.Time
		now      time.Time
		progress float64
		ready    *time.Time
	}{
		{"archived", StatusArchived, nil, time.Time{}, start, 0, nil},
		{"restoring after a restart", StatusRestoring, nil, time.Time{}, start, 0, nil},
		{"restoring, nothing yet", StatusRestoring, job(100, 0), time.Time{}, start.Add(time.Second), 0, nil},
		{"restoring, a quarter in 1s", StatusRestoring, job(100, 25), time.Time{}, start.Add(time.Second), 0.25, at(4 * time.Second)},
		{"all bytes, not committed", StatusRestoring, job(100, 100), time.Time{}, start.Add(time.Second), 0.99, at(time.Second * 100 / 99)},
		{"restored", StatusActive, job(100, 100), start.Add(2 * time.Second), start.Add(time.Minute), 1, at(2 * time.Second)},
		{"never archived", StatusActive, nil, time.Time{}, start, 1, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, ready := restoreProgress(c.status, c.job, c.finished, c.now)
			if p != c.progress || (ready == nil) != (c.ready == nil) || (ready != nil && !ready.Equal(*c.ready)) {
				t.Fatalf("progress %v ready %v, want %v %v", p, ready, c.progress, c.ready)
			}
		})
	}
}

func TestArchiveNeedsTier(t *testing.T) {
	t.Parallel()
	s := NewService(nil, nil, nil, nil, nil, nil, nil, Options{})
	_, err := s.archiving.archiveFile(context.Background(), File{ID: "f", Name: "a.txt", Status: StatusActive}, "system")
	if app.ErrorCode(err) != app.EConflict {
		t.Fatalf("archive without a tier: %v", err)
	}
	if n, err := s.archiving.archiveCold(context.Background(), time.Now()); n != 0 || err != nil {
		t.Fatalf("policy without a tier: %d %v", n, err)
	}
}
