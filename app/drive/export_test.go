package drive

// SetBeforeWrite makes s run fn between the early checks of every change and
// the transaction that writes it (nil: nothing), so that a test can change
// the world in between.
func SetBeforeWrite(s *Service, fn func()) {
	if fn == nil {
		s.beforeWrite.Store(nil)
		return
	}
	s.beforeWrite.Store(&fn)
}

// SetCollectorWaits makes s run fn each time its blob collector finds the
// blobs' lock held by writers (nil: nothing), so that a test can wait for it.
func SetCollectorWaits(s *Service, fn func()) {
	if fn == nil {
		s.collectorWaits.Store(nil)
		return
	}
	s.collectorWaits.Store(&fn)
}

// SetChildBatch makes Children read n items per query.
func SetChildBatch(s *Service, n int) { s.childBatch = n }
