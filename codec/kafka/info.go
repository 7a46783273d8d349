package kafka

import "slices"

// Then returns the facts of a scan of a whole segment from in, the facts
// of a scan of its beginning, and next, those of a scan of the rest
// (Options.Start at in.LastEnd), as a grown segment is taken in.
func (in Info) Then(next Info) Info {
	m := next
	m.First = in.First
	if next.Batches == 0 {
		m.LastEnd = in.LastEnd
	}
	m.Batches += in.Batches
	m.Records += in.Records
	m.ControlBatches += in.ControlBatches
	m.ControlRecords += in.ControlRecords
	m.Commits += in.Commits
	m.Aborts += in.Aborts
	m.TransactionalBatches += in.TransactionalBatches
	m.OutOfOrder += in.OutOfOrder
	for i := range m.Magic {
		m.Magic[i] += in.Magic[i]
	}
	for i := range m.Codecs {
		m.Codecs[i] += in.Codecs[i]
	}
	if in.FirstOffset >= 0 {
		m.FirstOffset = in.FirstOffset
	}
	if in.Records > 0 {
		m.FirstTimestamp = in.FirstTimestamp
	}
	if next.LastOffset < 0 {
		m.LastOffset = in.LastOffset
	}
	if next.Records == 0 {
		m.LastTimestamp = in.LastTimestamp
	}
	m.MaxTimestamp = max(in.MaxTimestamp, next.MaxTimestamp)
	if next.Prev < 0 {
		m.Prev = in.Prev
	}
	m.Producers = slices.Clone(in.Producers)
	m.MoreProducers = in.MoreProducers || next.MoreProducers
	for _, p := range next.Producers {
		switch {
		case slices.Contains(m.Producers, p):
		case len(m.Producers) >= MaxProducers:
			m.MoreProducers = true
		default:
			m.Producers = append(m.Producers, p)
		}
	}
	return m
}
