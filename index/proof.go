package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/source"
)

// Saved tables are hints. A saved table (a local cache file, or a table
// published next to an object) that passes every check of its own (its
// checksum, the source's identity, its structure) is still only a claim
// about the source: it may have been made from other bytes of the same
// size and version, by a bug or by an attacker who wrote the sidecar. It
// is used at once for what costs nothing to get wrong for long — the
// record count, sizes and names a listing shows — while a record's bytes
// are served only once its place is proven: a number is a count of the
// records before it, so the proof of record k is the format's own scanner
// finding records 0..k where and as the table says. Proofs run on demand,
// from where the last one stopped, at least proveBatch records at a time
// (reads in file order prove in batches; a read far ahead waits for the
// scan up to it, as a build would have made it wait). The damage a table
// claims, the only place a table can hide records without shifting its
// own offsets, is checked when it is loaded (checkClaims): the scanner run
// over each damaged range must find no record in it. A lie found either
// way drops the saved table (one log line, its file removed) and the
// source is scanned afresh; the reads of the old generation fail
// (ErrChanged) and ReadAt goes on with the new table. A compressed TFRecord
// table sealed by this user's recfs is exempt: its proof would be a whole
// decompression of the file (see cache_vouch.go).

// proveBatch is how many records a proof goes past the one a read needs.
const proveBatch = 4096

// errLie marks a saved table found wrong by a proof.
var errLie = errors.New("index: saved table does not match the source")

// errSwapped reports a read of a snapshot that another snapshot replaced
// while it ran, releasing what it read (its stored windows).
var errSwapped = errors.New("index: the table was replaced during the read")

// errNotProvable refuses a saved table of a format whose table cannot be
// proven (no prover): its source is scanned instead.
var errNotProvable = errors.New("index: saved tables of this format cannot be proven")

// proof is what has been found true of a snapshot loaded from a saved
// table: records [0, upto) were found by the format's own scanner where
// and as the table says.
type proof struct {
	upto atomic.Int64
	mu   sync.Mutex
	scan provingScan // positioned before record next; nil until needed
	next int64
	lie  error // the lie found, once found
}

// prover is a table whose records the format's scanner can find again.
// A format's saved tables are used only when its table is one.
type prover interface {
	// proveFrom returns a scan of src (which s describes) that yields
	// the records found after record k-1 (all of them for k == 0), with
	// the number of the first record it yields (k, or 0 for a source
	// that can only be scanned from the start).
	proveFrom(src io.ReaderAt, s *snapshot, k int64, o Options) (provingScan, int64, error)
}

// provingScan is a scan that proves a table's records.
type provingScan interface {
	next() bool      // advances to the next record found
	is(k int64) bool // whether the record found is the table's record k
	at() int64       // the file offset of the record found
	err() error      // what ended the scan, if not its end
	close()          // releases the scan
}

// Proven reports whether the place and size of record n are proven: always
// for a table made by a scan; for one loaded from a saved table, once a
// read has proven it (see ReadAt). Size and Offset of a record not proven
// yet are the saved table's claims.
func (t *Table) Proven(n int64) bool {
	p := t.s().proof
	return p == nil || n < p.upto.Load()
}

// scanProof is the provingScan of a format scanner (sc.Next, sc.Record,
// sc.Err as more, record, fail): the records skip says belong to the
// proven part are passed over, same compares a record found with the
// table's record k.
type scanProof[R any] struct {
	more    func() bool
	record  func() R
	fail    func() error
	skip    func(R) bool // nil: none
	same    func(k int64, r R) bool
	offset  func(R) int64
	release func() // nil: nothing
	cur     R
}

func (p *scanProof[R]) next() bool {
	for p.more() {
		if p.cur = p.record(); p.skip == nil || !p.skip(p.cur) {
			return true
		}
	}
	return false
}

func (p *scanProof[R]) is(k int64) bool { return p.same(k, p.cur) }
func (p *scanProof[R]) at() int64       { return p.offset(p.cur) }
func (p *scanProof[R]) err() error      { return p.fail() }

func (p *scanProof[R]) close() {
	if p.release != nil {
		p.release()
	}
}

// carried returns the proof of a snapshot that extends the one p belongs
// to: what p proved holds for it too (nil when nothing is to be proved).
func (p *proof) carried() *proof {
	if p == nil {
		return nil
	}
	c := &proof{}
	c.upto.Store(p.upto.Load())
	return c
}

// prove makes sure record k of s (and every record before it) is where s
// says, scanning the source if it was not proven yet. It returns an error
// matching errLie when the table is wrong, other errors when the source
// could not be read.
func (t *Table) prove(s *snapshot, k int64) error {
	p := s.proof
	if p == nil || k < p.upto.Load() {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lie != nil {
		return p.lie
	}
	if k < p.upto.Load() {
		return nil
	}
	err := t.proveTo(s, p, min(s.n, k+proveBatch))
	if err != nil && errors.Is(err, errLie) {
		p.lie = err
		if p.scan != nil {
			p.scan.close()
			p.scan = nil
		}
	}
	return err
}

// proveTo advances p until records [0, target) are proven, and once they
// all are, checks that the source holds no record after them.
func (t *Table) proveTo(s *snapshot, p *proof, target int64) error {
	if p.scan == nil {
		sc, first, err := s.tab.(prover).proveFrom(interruptible(t.lifetime(), t.src(s)), s, p.upto.Load(), t.opt)
		if err != nil {
			return lieOr(err, "the source does not open as the table's format")
		}
		p.scan, p.next = sc, first
		t.reseal(s)
	}
	for p.next < target {
		if !p.scan.next() {
			err := p.scan.err()
			p.scan.close()
			p.scan = nil
			return lieOr(err, fmt.Sprintf("the source holds no record %d", p.next))
		}
		if !p.scan.is(p.next) {
			return fmt.Errorf("%w: record %d: the scan finds a record at offset %d, the table another", errLie, p.next, p.scan.at())
		}
		p.next++
		// Publish each record as it is proven: a read of a proven record
		// must not wait for (or fail with) the rest of a batch stuck on a
		// slow or failing block further on.
		if p.next > p.upto.Load() {
			p.upto.Store(p.next)
		}
	}
	if p.next == s.n {
		more := p.scan.next()
		var at int64
		if more {
			at = p.scan.at()
		}
		err := p.scan.err()
		p.scan.close()
		p.scan = nil
		if more {
			return fmt.Errorf("%w: the source has a record at offset %d after the table's last", errLie, at)
		}
		if err != nil && !codecError(err) {
			return err
		}
	}
	if p.next > p.upto.Load() {
		p.upto.Store(p.next)
	}
	return nil
}

// lieOr returns err when it is no fault of the bytes (an I/O error, an
// interruption), else a lie saying what.
func lieOr(err error, what string) error {
	if err != nil && !codecError(err) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%w: %s (%v)", errLie, what, err)
	}
	return fmt.Errorf("%w: %s", errLie, what)
}

// codecError reports whether err is about the bytes of a file.
func codecError(err error) bool {
	for _, e := range []error{codec.ErrFormat, codec.ErrCorrupt, codec.ErrTruncated, codec.ErrLimit, codec.ErrUnsupported} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// checkClaims checks, when a saved table is loaded, the damage it claims:
// the scanner run over each damaged range (from the end of the record
// before it) must find the table's next record after it, and none in it.
// Nearby ranges share a scan, which then proves the records between them.
func (t *Table) checkClaims(ctx context.Context, s *snapshot) error {
	if len(s.damage) == 0 {
		return nil
	}
	pr := s.tab.(prover)
	src := interruptible(ctx, t.src(s))
	var sc provingScan
	defer func() {
		if sc != nil {
			sc.close()
		}
	}()
	next := int64(-1) // the record sc yields next
	for _, d := range s.damage {
		j := int64(sort.Search(int(s.n), func(k int) bool { return s.tab.offset(int64(k)) >= d.Off }))
		if sc == nil || next > j || next < j && s.tab.offset(next) < d.Off-claimScanGap {
			if sc != nil {
				sc.close()
			}
			var err error
			if sc, next, err = pr.proveFrom(src, s, j, t.opt); err != nil {
				sc = nil
				return lieOr(err, "the source does not open as the table's format")
			}
		}
		for ; next <= j && next < s.n; next++ {
			if !sc.next() {
				return lieOr(sc.err(), fmt.Sprintf("the source holds no record %d", next))
			}
			if !sc.is(next) {
				return fmt.Errorf("%w: the damage claimed at offset %d hides a record at offset %d", errLie, d.Off, sc.at())
			}
		}
		if j == s.n && next == s.n {
			if sc.next() {
				return fmt.Errorf("%w: the damage claimed at offset %d hides a record at offset %d", errLie, d.Off, sc.at())
			}
			if err := sc.err(); err != nil && !codecError(err) {
				return err
			}
			next++ // past the end: a later range needs a new scan
		}
	}
	return nil
}

// claimScanGap is how far a claims check scans on rather than start again
// at the next damaged range.
const claimScanGap = 4 << 20

// loaded readies a snapshot loaded from the saved table cf for use: with
// read, its first and last records are read back (verifySource); its
// claims of damage are checked, and its records are to be proven as they
// are read. A lie found drops the saved table (a log line, its file
// removed): the caller builds afresh.
func (t *Table) loaded(ctx context.Context, s *snapshot, cf string, read bool) error {
	if _, ok := s.tab.(prover); !ok {
		return errNotProvable
	}
	v, _ := s.tab.(voucher)
	sealed := v != nil && v.vouched()
	var err error
	if read {
		err = t.verifySource(s)
	}
	if err == nil && !sealed {
		err = t.checkClaims(ctx, s)
	}
	if err != nil {
		if errors.Is(err, errLie) {
			t.dropSaved(s, err)
		}
		return err
	}
	if !sealed {
		s.proof = &proof{}
	}
	t.cf = cf
	return nil
}

// dropSaved logs that the saved table s was loaded from lies, and removes
// it.
func (t *Table) dropSaved(s *snapshot, why error) {
	logrus.WithFields(logrus.Fields{"file": t.path, "saved_index": s.cached}).
		Warnf("index: the saved index of %s does not match it (%v): dropped, scanning the source", t.path, why)
	if s.cached != "" {
		_ = os.Remove(s.cached)
	}
}

// distrust replaces s, a snapshot whose saved table a proof found lying
// (why), by a table scanned afresh from the same version of the source
// (another generation, unless it has every record where s had it), and
// saves that one in its place. Until the scan is done, reads wait; if it
// fails, s stays and keeps failing its reads.
func (t *Table) distrust(s *snapshot, why error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.s() != s {
		return // replaced meanwhile
	}
	t.dropSaved(s, why)
	var r io.ReaderAt = t.src(s)
	if mp, ok := r.(source.Mapper); ok {
		if m, err := mp.Map(); err == nil {
			defer m.Close()
			r = m
		}
	}
	ns, err := build(t.lifetime(), r, s.size, t.opt)
	if err != nil {
		logrus.WithError(err).WithField("file", t.path).Warn("index: scanning the source again failed")
		return
	}
	ns.id, ns.origin = s.id, s.origin
	ns.setSource(s.src)
	ns.gen = s.gen + 1
	if ns.n == s.n && ns.tab.samePrefix(s.tab, s.n) {
		// Every record where s had it (only other parts of the saved
		// table, such as a stored window, lied): the same generation, so
		// that reads of it, open handles among them, go on in ns.
		ns.gen = s.gen
	}
	t.swapSnap(s, ns)
	if t.cf != "" {
		_ = saveCache(t.lifetime(), t.cf, ns, t.opt) // a failure to save costs only speed next time
	}
}

// lifetime returns the table's context, cancelled by Close: the proofs
// and rescans that reads start stop with the table.
func (t *Table) lifetime() context.Context {
	t.lifeOnce.Do(func() { t.life, t.endLife = context.WithCancel(context.Background()) })
	return t.life
}
