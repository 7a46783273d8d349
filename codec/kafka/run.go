package kafka

// NextRun advances to the next run of records: the records of one intact
// batch that Next would yield next, at most maxKept of them (a batch with
// more gives several runs in turn), control records included. It returns
// false where Next would, and counts the run's records in Info as Next
// does. A scan may mix Next and NextRun: a run starts at the record after
// the last one yielded.
//
// A v2 batch's records were parsed and kept when its checksum and layout
// were verified (see load): a run of them is handed out as they were kept,
// without parsing them again or copying them one by one. Records of v0/v1
// messages, of batches read through the file rather than the window, and
// those of a batch past maxKept are parsed one by one, as Next does.
func (s *Scanner) NextRun() bool {
	if !s.advance() {
		return false
	}
	if n := min(int(s.left), len(s.recs)-s.yi); s.batch.Magic == 2 && s.origin == 0 && n > 0 {
		s.run = s.recs[s.yi : s.yi+n]
		last := &s.run[n-1]
		s.left -= int32(n)
		s.yi += n
		s.data.pos = last.Pos + last.Len
		s.recPrev = last.Offset
		s.cur = *last
		s.countRun(s.run)
		s.keptRuns++
		return true
	}
	s.run = s.own[:0]
	for s.left > 0 && len(s.run) < maxKept {
		s.left--
		if !s.yield() {
			s.changed()
			break
		}
		s.run = append(s.run, s.cur)
	}
	s.own = s.run[:0]
	return len(s.run) > 0
}

// Run returns the batch and the records of the run NextRun found: the
// scanner's, valid until the next call of Next or NextRun, and not to be
// changed. The records are those Next would yield one by one, in order.
func (s *Scanner) Run() (*Batch, []Record) { return &s.batch, s.run }

// countRun adds the records rs of the current batch, just handed out as a
// run, to the scan's Info, as count does one at a time.
func (s *Scanner) countRun(rs []Record) {
	in := &s.info
	if in.FirstTimestamp < 0 && in.Records == 0 {
		in.FirstTimestamp = rs[0].Timestamp
	}
	in.Records += int64(len(rs))
	in.LastTimestamp = rs[len(rs)-1].Timestamp
	m := in.MaxTimestamp
	for i := range rs {
		m = max(m, rs[i].Timestamp)
	}
	in.MaxTimestamp = m
	if s.batch.Control() {
		for i := range rs {
			s.countControl(&rs[i])
		}
	}
}
