package backup

// SetAfterSnapshot makes Create call f after each database snapshot (tests
// use it to act as the running server between a snapshot and the copies).
func SetAfterSnapshot(o *Options, f func(attempt int)) { o.afterSnapshot = f }
