package dbdecode

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/recfs/recfs/codec/decode"
)

// ErrBudget means a MANIFEST's live state grew past its memory budget;
// the edits after it are not applied to the summary.
var ErrBudget = errors.New("dbdecode: live state past its memory budget")

// Manifest is the decoder of MANIFEST records: each VersionEdit as its
// fields (Decode), and the live LSM state the edits amount to (Learn,
// Summary): per column family and level, the tables with their sizes,
// key ranges and sequence numbers, and the log and file numbers of the
// last edits, as ldb manifest_dump and pebble manifest dump end with.
type Manifest struct {
	budget int64
	mu     sync.Mutex
	st     liveState
}

// NewManifest returns a Manifest whose live state keeps at most budget
// bytes (0: decode.DefaultBudget).
func NewManifest(budget int64) *Manifest {
	if budget <= 0 {
		budget = decode.DefaultBudget
	}
	m := &Manifest{budget: budget}
	m.Reset()
	return m
}

// Decode writes the fields of one VersionEdit.
func (m *Manifest) Decode(w *decode.Writer, rec *decode.Record) error {
	return misfit(writeVersionEdit(w, rec.Payload))
}

// Learn applies one VersionEdit to the live state. An edit that does not
// decode is counted and skipped; past the budget, learning stops.
func (m *Manifest) Learn(rec *decode.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st.apply(rec.N, rec.Payload, m.budget)
}

// Reset forgets every edit.
func (m *Manifest) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.st = liveState{cfs: map[uint64]*cfLive{}, firstBad: -1, nums: map[string]uint64{}}
}

// Summary writes the live state (see the package documentation).
func (m *Manifest) Summary(w *decode.Writer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.st.write(w)
	return nil
}

// liveState is what the edits learned so far amount to.
type liveState struct {
	edits, bad int64 // edits learned; of those, edits that did not decode
	firstBad   int64 // the first of those, or -1
	overAt     int64 // the edit that passed the budget, or 0
	over       bool
	bytes      int64 // memory held, counted
	rocks      bool  // RocksDB wrote it (names key kinds)
	comparator []byte
	nums       map[string]uint64 // log-number, next-file, last-seq, ... : the last value
	cfs        map[uint64]*cfLive
}

// cfLive is one column family: its name and live tables by file number.
type cfLive struct {
	name    []byte
	named   bool
	dropped bool
	files   map[uint64]*liveFile
}

// liveFile is one live table.
type liveFile struct {
	level, num, size  uint64
	smallest, largest []byte
	lo, hi            uint64
	seqs              bool
}

// fileCost is the memory a live table is counted at, beside its keys.
const fileCost = 128

// cf returns column family id, made on first use.
func (s *liveState) cf(id uint64) *cfLive {
	c := s.cfs[id]
	if c == nil {
		c = &cfLive{files: map[uint64]*liveFile{}}
		if id == 0 {
			c.name = []byte("default")
		}
		s.cfs[id] = c
	}
	return c
}

// liveEdit is what one VersionEdit changes in the live state.
type liveEdit struct {
	cf       uint64
	adds     []*liveFile
	dels     [][2]uint64 // level, file
	addName  []byte
	hasName  bool
	drop     bool
	nums     map[string]uint64
	compName []byte
	rocks    bool
}

// readEdit gathers the changes of one VersionEdit. The fields of a
// RocksDB edit name their column family anywhere in the edit, so they
// are gathered before any applies.
func readEdit(rec []byte) (*liveEdit, error) {
	e := editReader{r: reader{b: rec}}
	ed := &liveEdit{nums: map[string]uint64{}}
	for {
		ok, err := e.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		ed.add(&e.f)
	}
	ed.rocks = e.rocks
	return ed, nil
}

// add notes one field of the edit.
func (ed *liveEdit) add(f *field) {
	switch f.tag {
	case tagComparator:
		ed.compName = bytes.Clone(f.parts[0].b)
	case tagLogNumber, tagNextFile, tagLastSeq, tagPrevLogNumber, tagMinLogNumberToKeep, tagMaxColumnFamily:
		ed.nums[f.name] = f.parts[0].num
	case tagColumnFamily:
		ed.cf = f.parts[0].num
	case tagColumnFamilyAdd:
		ed.addName, ed.hasName = bytes.Clone(f.parts[0].b), true
	case tagColumnFamilyDrop:
		ed.drop = true
	case tagDeletedFile:
		ed.dels = append(ed.dels, [2]uint64{f.parts[0].num, f.parts[1].num})
	case tagNewFile, tagNewFile2, tagNewFile3, tagNewFile4, tagNewFile5:
		ed.adds = append(ed.adds, newLiveFile(f))
	}
}

// apply applies edit n, whole or not at all: an edit that does not decode
// is counted and skipped, one that would take the state past budget
// stops learning.
func (s *liveState) apply(n int64, rec []byte, budget int64) error {
	if s.over {
		return ErrBudget
	}
	s.edits++
	ed, err := readEdit(rec)
	if err != nil {
		s.bad++
		if s.firstBad < 0 {
			s.firstBad = n
		}
		return nil
	}
	if s.costAfter(ed) > budget {
		s.over, s.overAt = true, n
		return ErrBudget
	}
	s.rocks = s.rocks || ed.rocks
	if ed.compName != nil {
		s.comparator = ed.compName
	}
	for k, v := range ed.nums {
		s.nums[k] = v
	}
	c := s.cf(ed.cf)
	if ed.hasName {
		c.name, c.named, c.dropped = ed.addName, true, false
	}
	if ed.drop {
		c.dropped = true
	}
	for _, d := range ed.dels {
		if f, ok := c.files[d[1]]; ok && f.level == d[0] {
			s.bytes -= f.cost()
			delete(c.files, d[1])
		}
	}
	for _, f := range ed.adds {
		if old, ok := c.files[f.num]; ok {
			s.bytes -= old.cost()
		}
		c.files[f.num] = f
		s.bytes += f.cost()
	}
	return nil
}

// costAfter is the memory the state would hold with ed applied.
func (s *liveState) costAfter(ed *liveEdit) int64 {
	cost := s.bytes
	for _, f := range ed.adds {
		cost += f.cost()
	}
	if c := s.cfs[ed.cf]; c != nil {
		for _, d := range ed.dels {
			if f, ok := c.files[d[1]]; ok {
				cost -= f.cost()
			}
		}
	}
	return cost
}

// cost is the memory a live table is counted at.
func (f *liveFile) cost() int64 { return fileCost + int64(len(f.smallest)+len(f.largest)) }

// newLiveFile makes the live table of an add-file field. The bounds are
// the point-key ones, else (pebble, range keys only) the range-key ones.
func newLiveFile(f *field) *liveFile {
	lf := &liveFile{}
	for _, p := range f.parts {
		switch p.key {
		case "level":
			lf.level = p.num
		case "file":
			lf.num = p.num
		case "size":
			lf.size = p.num
		case "smallest":
			lf.smallest = bytes.Clone(p.b)
		case "largest":
			lf.largest = bytes.Clone(p.b)
		case "range-smallest":
			if lf.smallest == nil {
				lf.smallest = bytes.Clone(p.b)
			}
		case "range-largest":
			if lf.largest == nil {
				lf.largest = bytes.Clone(p.b)
			}
		case "seqs":
			lf.lo, lf.hi, lf.seqs = p.num, p.num2, true
		}
	}
	return lf
}

// Orders of the numbers of the live state's header.
var liveNums = []string{"log-number", "prev-log-number", "next-file", "last-seq", "min-log-number-to-keep", "max-column-family"}

// write writes the live state: a line of counts, the comparator and the
// last numbers, then per column family and level a line of totals and a
// line per table (L0 by file number, deeper levels by smallest key).
func (s *liveState) write(w *decode.Writer) {
	pebbleKinds, rocksKinds := keyKinds()
	kinds := pebbleKinds
	if s.rocks {
		kinds = rocksKinds
	}
	f := field{name: "live"}
	line := func(parts ...part) {
		f.parts = parts
		writeField(w, &f, kinds)
	}
	s.writeHead(line)
	ids := make([]uint64, 0, len(s.cfs))
	for id := range s.cfs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	named := len(ids) > 1 || len(ids) == 1 && ids[0] != 0
	for _, id := range ids {
		c := s.cfs[id]
		var cfPart []part
		if named {
			desc := part{key: "column-family", show: sNum, num: id}
			if c.dropped {
				line(desc, part{key: "name", show: sText, b: c.name}, part{key: "dropped", show: sNum, num: 1})
				continue
			}
			line(desc, part{key: "name", show: sText, b: c.name})
			cfPart = []part{{key: "cf", show: sText, b: c.name}}
			if !c.named && id != 0 {
				cfPart = []part{{key: "cf", show: sNum, num: id}}
			}
		}
		c.writeLevels(line, cfPart)
	}
}

// writeHead writes the live state's counts, comparator and last numbers.
func (s *liveState) writeHead(line func(...part)) {
	head := []part{{key: "edits", show: sNum, num: uint64(s.edits)}}
	if s.bad > 0 {
		head = append(head, part{key: "undecoded", show: sNum, num: uint64(s.bad)}, part{key: "first-undecoded", show: sNum, num: uint64(s.firstBad)})
	}
	line(head...)
	if s.over {
		line(part{key: "incomplete", show: sText, pos: true, b: fmt.Appendf(nil, "incomplete: the state passed its memory budget at record %d; it and later edits are not applied", s.overAt)})
	}
	if s.comparator != nil {
		line(part{key: "comparator", show: sText, b: s.comparator})
	}
	for _, k := range liveNums {
		if v, ok := s.nums[k]; ok {
			show := sFile
			if k == "last-seq" || k == "max-column-family" {
				show = sNum
			}
			line(part{key: k, show: show, num: v})
		}
	}
}

// writeLevels writes a column family's levels: a line of totals per
// level, then a line per table, each line starting with cfPart.
func (c *cfLive) writeLevels(line func(...part), cfPart []part) {
	files := c.sorted()
	for i := 0; i < len(files); {
		j, size := i, uint64(0)
		for ; j < len(files) && files[j].level == files[i].level; j++ {
			size += files[j].size
		}
		lvl := part{key: "level", show: sLevel, pos: true, num: files[i].level}
		line(append(slices.Clone(cfPart), lvl, part{key: "files", show: sNum, num: uint64(j - i)}, part{key: "size", show: sNum, num: size})...)
		for _, lf := range files[i:j] {
			ps := append(slices.Clone(cfPart), lvl, part{key: "file", show: sFile, pos: true, num: lf.num}, part{key: "size", show: sNum, num: lf.size},
				part{key: "smallest", show: sIKey, b: lf.smallest}, part{key: "largest", show: sIKey, b: lf.largest})
			if lf.seqs {
				ps = append(ps, part{key: "seqs", show: sSeqs, num: lf.lo, num2: lf.hi})
			}
			line(ps...)
		}
		i = j
	}
}

// sorted returns the column family's tables by level, then L0 by file
// number and deeper levels by smallest key.
func (c *cfLive) sorted() []*liveFile {
	files := make([]*liveFile, 0, len(c.files))
	for _, lf := range c.files {
		files = append(files, lf)
	}
	slices.SortFunc(files, func(a, b *liveFile) int {
		if a.level != b.level {
			return cmp.Compare(a.level, b.level)
		}
		if a.level > 0 {
			if c := bytes.Compare(userKey(a.smallest), userKey(b.smallest)); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.num, b.num)
	})
	return files
}

// userKey returns the user key of internal key k.
func userKey(k []byte) []byte {
	if len(k) < 8 {
		return k
	}
	return k[:len(k)-8]
}
