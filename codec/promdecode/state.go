package promdecode

import (
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/recfs/recfs/codec/decode"
)

// entryOverhead is what a kept series costs beside its label bytes.
const entryOverhead = 64

// seriesTable keeps series labels by ref, each with the point it was
// learned at (a record number, or a segment number), within a byte
// budget. It is safe for concurrent use.
type seriesTable struct {
	mu     sync.RWMutex
	m      map[uint64]seriesEntry
	bytes  int64
	budget int64
	stopAt int64 // the point from which nothing more was kept (budget reached); -1: none
}

type seriesEntry struct {
	labels string // encoded label set
	text   string // the labels in text syntax (appendLabels)
	at     int64
}

func newSeriesTable(budget int64) *seriesTable {
	return &seriesTable{m: map[uint64]seriesEntry{}, budget: budget, stopAt: -1}
}

// add keeps labels for ref as learned at at, unless ref is known or the
// budget is reached (learning is in order of at, so the same series are
// kept whatever the order records are read in).
func (t *seriesTable) add(ref uint64, labels []byte, at int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.m[ref]; ok {
		return
	}
	if t.stopAt >= 0 {
		return
	}
	text := appendLabels(nil, labels)
	cost := int64(len(labels)+len(text)) + entryOverhead
	if t.bytes+cost > t.budget {
		t.stopAt = at
		return
	}
	t.m[ref] = seriesEntry{labels: string(labels), text: string(text), at: at}
	t.bytes += cost
}

// get returns the labels of ref learned before point before; full says
// that they may be missing because the budget was reached before it.
func (t *seriesTable) get(ref uint64, before int64) (e seriesEntry, ok, full bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if e, found := t.m[ref]; found && e.at < before {
		return e, true, false
	}
	return seriesEntry{}, false, t.stopAt >= 0 && t.stopAt < before
}

func (t *seriesTable) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m, t.bytes, t.stopAt = map[uint64]seriesEntry{}, 0, -1
}

// walSeries keeps the series of the segments of one directory, learned
// whole, in segment order, as far as a segment asks: the state the
// sessions of its segments share.
type walSeries struct {
	mu   sync.Mutex
	dir  decode.Dir
	segs []int64          // segment numbers, sorted (listed when needed)
	name map[int64]string // their file names
	done int              // segs[:done] are learned
	tab  *seriesTable     // at = segment number
	buf  []byte
}

func newWALSeries(dir decode.Dir, budget int64) *walSeries {
	return &walSeries{dir: dir, tab: newSeriesTable(budget)}
}

// get returns the labels of ref from the segments numbered below seg,
// learning them first if needed.
func (w *walSeries) get(ref uint64, seg int64) (seriesEntry, bool, bool) {
	w.learnBelow(seg)
	return w.tab.get(ref, seg)
}

// learnBelow learns every segment numbered below seg not learned yet.
func (w *walSeries) learnBelow(seg int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done == len(w.segs) || len(w.segs) > 0 && w.segs[len(w.segs)-1] < seg-1 {
		w.list()
	}
	for w.done < len(w.segs) && w.segs[w.done] < seg {
		w.learn(w.segs[w.done])
		w.done++
	}
}

// list reads the directory's segment names, keeping those learned.
func (w *walSeries) list() {
	names, err := w.dir.Names()
	if err != nil {
		return
	}
	if w.name == nil {
		w.name = map[int64]string{}
	}
	for _, nm := range names {
		if n, ok := segmentNumber(nm); ok {
			if _, known := w.name[n]; !known && (w.done == 0 || n > w.segs[w.done-1]) {
				w.name[n] = nm
				w.segs = append(w.segs, n)
			}
		}
	}
	learned := w.segs[:w.done]
	rest := w.segs[w.done:]
	sort.Slice(rest, func(i, j int) bool { return rest[i] < rest[j] })
	w.segs = append(learned, rest...)
}

// learn reads the series records of segment seg.
func (w *walSeries) learn(seg int64) {
	src, err := w.dir.OpenRecords(w.name[seg])
	if err != nil {
		return
	}
	defer src.Close()
	var first [1]byte
	for n := range src.Len() {
		if src.Size(n) == 0 {
			continue
		}
		if k, _ := src.ReadAt(n, first[:], 0); k != 1 || first[0] != typeSeries {
			continue
		}
		raw, err := decode.ReadRecord(src, n, w.buf, decode.DefaultMaxRecord)
		if err != nil {
			continue
		}
		w.buf = raw[:0]
		learnSeries(w.tab, raw, seg)
	}
}

// segmentNumber returns the number a segment's name is: all digits.
func segmentNumber(name string) (int64, bool) {
	if name == "" || strings.TrimLeft(name, "0123456789") != "" || len(name) > 18 {
		return 0, false
	}
	n, err := strconv.ParseInt(name, 10, 64)
	return n, err == nil
}

// baseName and dirName split a source path (a local path or a URL).
func baseName(p string) string { return path.Base(p) }
func dirName(p string) string  { return path.Dir(p) }
