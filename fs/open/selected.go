package open

import (
	"context"
	"errors"

	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/report"
)

// SeqMinRecords is the selection size from which Selected reads the
// records from a fresh scan in file order rather than a read per record
// through the table.
const SeqMinRecords = 4096

// A Selection is a table and the ranges of its records a selection
// names; Close closes what Selected opened.
type Selection struct {
	Table  *index.Table
	Ranges []report.Range
	// Rescanned says the table is a fresh scan in file order (Sequential)
	// for a selection of SeqMinRecords records or more.
	Rescanned bool
	close     func() error
}

// Close closes the table and its source (and the table Selected opened
// first, when Rescanned), returning their errors joined; a zero
// Selection's Close does nothing.
func (s *Selection) Close() error {
	if s.close == nil {
		return nil
	}
	return s.close()
}

// Selected opens the record file target names (Table) to read the records
// sel or offs select (report.Select), calling opened (when not nil) with
// the table before the selection is resolved (a damage warning then
// precedes a selection's error). A selection of SeqMinRecords records or
// more is then read from a fresh scan of target in file order
// (Sequential), whose reads of a local file go through a read-ahead
// window and of an object through large sequential GETs, instead of a
// read per record.
func Selected(ctx context.Context, target string, sel []report.Range, offs []report.SeqRange, o Options, opened func(*index.Table)) (*Selection, error) {
	t, err := Table(ctx, target, o)
	if err != nil {
		return nil, err
	}
	if opened != nil {
		opened(t)
	}
	rs, err := report.Select(t, target, sel, offs)
	if err != nil {
		t.Close()
		return nil, err
	}
	if report.Count(rs) < SeqMinRecords {
		return &Selection{Table: t, Ranges: rs, close: t.Close}, nil
	}
	st, err := Sequential(ctx, target, o)
	if err != nil {
		t.Close()
		return nil, err
	}
	return &Selection{Table: st.Table, Ranges: rs, Rescanned: true, close: func() error {
		return errors.Join(st.Close(), t.Close())
	}}, nil
}
