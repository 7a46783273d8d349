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
// sessions of its segments share. The newest checkpoint.NNNNNNNN
// directory (where Prometheus keeps the series of the segments up to
// NNNNNNNN it deleted) is learned after segment NNNNNNNN, for the
// segments after it.
type walSeries struct {
	mu    sync.Mutex
	dir   decode.Dir
	units []walUnit       // what to learn, in order (listed when needed)
	known map[string]bool // the names in units
	done  int             // units[:done] are learned
	tab   *seriesTable    // at = segment number
	buf   []byte
}

// walUnit is a segment, or a checkpoint directory, to learn series from.
type walUnit struct {
	num  int64  // the segment's number; a checkpoint's last segment
	name string // its name in the directory
	ckpt bool   // a checkpoint directory
}

// before reports whether u is learned before v.
func (u walUnit) before(v walUnit) bool {
	return u.num < v.num || u.num == v.num && !u.ckpt && v.ckpt
}

func newWALSeries(dir decode.Dir, budget int64) *walSeries {
	return &walSeries{dir: dir, tab: newSeriesTable(budget), known: map[string]bool{}}
}

// get returns the labels of ref from the segments numbered below seg,
// learning them first if needed.
func (w *walSeries) get(ref uint64, seg int64) (seriesEntry, bool, bool) {
	w.learnBelow(seg)
	return w.tab.get(ref, seg)
}

// learnBelow learns every unit numbered below seg not learned yet.
func (w *walSeries) learnBelow(seg int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done == len(w.units) || w.units[len(w.units)-1].num < seg-1 {
		w.list()
	}
	for w.done < len(w.units) && w.units[w.done].num < seg {
		w.learn(w.units[w.done])
		w.done++
	}
}

// list reads the directory's segment names and its newest checkpoint,
// keeping those learned; a unit that sorts before the last one learned
// is left out (its series came too late to be learned in order).
func (w *walSeries) list() {
	names, err := w.dir.Names()
	if err != nil {
		return
	}
	var add []walUnit
	ckpt := walUnit{num: -1, ckpt: true}
	for _, nm := range names {
		if n, ok := segmentNumber(nm); ok {
			add = append(add, walUnit{num: n, name: nm})
		} else if n, ok := checkpointNumber(nm); ok && n > ckpt.num {
			ckpt.num, ckpt.name = n, nm
		}
	}
	if _, ok := w.dir.(decode.SubDirs); ok && ckpt.num >= 0 {
		add = append(add, ckpt)
	}
	for _, u := range add {
		if !w.known[u.name] && (w.done == 0 || w.units[w.done-1].before(u)) {
			w.known[u.name] = true
			w.units = append(w.units, u)
		}
	}
	rest := w.units[w.done:]
	sort.Slice(rest, func(i, j int) bool { return rest[i].before(rest[j]) })
}

// learn reads the series records of unit u.
func (w *walSeries) learn(u walUnit) {
	if !u.ckpt {
		w.learnFile(w.dir, u.name, u.num)
		return
	}
	sub, err := w.dir.(decode.SubDirs).Sub(u.name)
	if err != nil {
		return
	}
	names, err := sub.Names()
	if err != nil {
		return
	}
	var segs []walUnit
	for _, nm := range names {
		if n, ok := segmentNumber(nm); ok {
			segs = append(segs, walUnit{num: n, name: nm})
		}
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].num < segs[j].num })
	for _, s := range segs {
		w.learnFile(sub, s.name, u.num)
	}
}

// learnFile reads the series records of the segment name in dir, as
// learned at at.
func (w *walSeries) learnFile(dir decode.Dir, name string, at int64) {
	src, err := dir.OpenRecords(name)
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
		learnSeries(w.tab, raw, at)
	}
}

// checkpointNumber returns the number of the last segment a checkpoint
// directory's name says it holds: checkpoint.DIGITS.
func checkpointNumber(name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, "checkpoint.")
	if !ok {
		return 0, false
	}
	return segmentNumber(rest)
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
