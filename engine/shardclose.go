package engine

// close stops the goroutines; with flush it first writes the head out.
func (s *Shard) close(flush bool) error {
	if s.opts.ReadOnly || s.walDamage != nil || s.replayFailed != nil {
		if !s.opts.ReadOnly {
			s.closeSubs()
		}
		s.mu.Lock()
		for _, sg := range s.segs {
			sg.release()
		}
		s.segs = nil
		s.mu.Unlock()
		return nil
	}
	var err error
	if flush {
		err = s.Flush()
	}
	s.enqMu.Lock()
	already := s.enqClosed
	s.enqClosed = true
	s.enqMu.Unlock()
	if already {
		return err
	}
	close(s.stopping)
	s.wg.Wait()
	s.closeSubs()
	s.walMu.Lock()
	if s.wal != nil && s.log.broken.Load() {
		// Cut the partial write now rather than at the next start.
		if cerr := s.cutLog(); cerr != nil {
			s.opts.Logger.Warn("write-ahead log: cutting the partial write at close failed; the next start cuts it", "shard", s.id, "err", cerr)
		}
	}
	if s.wal != nil {
		if serr := s.wal.f.Sync(); err == nil && serr != nil {
			err = serr
		}
		if cerr := s.wal.close(); err == nil && cerr != nil {
			err = cerr
		}
		s.wal = nil
	}
	s.walMu.Unlock()
	s.mu.Lock()
	for _, sg := range s.segs {
		sg.release()
	}
	s.segs = nil
	// Heads not written out (a dropped shard, a failed flush) leave the
	// engine's accounting with the shard.
	mem := &s.eng.mem
	for _, h := range append([]*head{s.head}, s.frozen...) {
		h.mu.RLock()
		if b := int64(h.bytes); b > 0 {
			if !h.frozen {
				mem.active.Add(-b)
				mem.activeHeads.Add(-1)
			}
			mem.total.Add(-b)
		}
		h.mu.RUnlock()
	}
	s.head = s.startHead(s.opts.Now(), s.walSeq)
	s.frozen = nil
	s.mu.Unlock()
	s.headParts.dropAll()
	s.eng.freed.release() // other shards' appends may fit now
	return err
}
