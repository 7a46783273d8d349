package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/index"
)

// gatedTable is an index.Table whose Append and Sync calls are counted and
// logged, Append call number holdAt (the first by default) held until gate
// is closed, and the ones that carry refuse (or any record, with
// refuseAll) refused.
type gatedTable struct {
	*index.Table
	gate      chan struct{}
	holdAt    int
	refuse    []byte
	refuseAll bool

	mu        sync.Mutex
	calls     []int // records per Append
	syncs     int   // Appends with a sync
	syncCalls int   // Sync calls
	clock     int
	ops       []tableOp
}

// tableOp is one Append or Sync call of a gatedTable, between the clock
// ticks start and end.
type tableOp struct {
	start, end int
	recs       []string // appended (none for Sync)
	synced     bool     // an Append with Sync, or Sync
}

// tick returns the next tick of g's clock.
func (g *gatedTable) tick() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.clock++
	return g.clock
}

// logOp logs op with its end tick now.
func (g *gatedTable) logOp(op tableOp) {
	op.end = g.tick()
	g.mu.Lock()
	g.ops = append(g.ops, op)
	g.mu.Unlock()
}

func (g *gatedTable) Append(ctx context.Context, recs [][]byte, o index.AppendOptions) (int64, error) {
	g.mu.Lock()
	held := len(g.calls) == g.holdAt
	g.calls = append(g.calls, len(recs))
	if o.Sync {
		g.syncs++
	}
	g.mu.Unlock()
	if held {
		<-g.gate
	}
	for _, r := range recs {
		if g.refuseAll || g.refuse != nil && bytes.Equal(r, g.refuse) {
			return 0, errors.New("refused")
		}
	}
	op := tableOp{start: g.tick(), synced: o.Sync}
	for _, r := range recs {
		op.recs = append(op.recs, string(r))
	}
	first, err := g.Table.Append(ctx, recs, o)
	if err == nil {
		g.logOp(op)
	}
	return first, err
}

func (g *gatedTable) Sync() error {
	g.mu.Lock()
	g.syncCalls++
	g.mu.Unlock()
	op := tableOp{start: g.tick(), synced: true}
	err := g.Table.Sync()
	if err == nil {
		g.logOp(op)
	}
	return err
}

// checkDurable checks that rec, whose fsync returned at tick ret, was
// made durable before: appended by an Append that synced, or followed by
// a sync that started after the Append that wrote it ended, both ending
// before ret.
func (g *gatedTable) checkDurable(t *testing.T, rec string, ret int) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	written := -1
	for _, op := range g.ops {
		for _, r := range op.recs {
			if r == rec {
				if op.synced && op.end < ret {
					return
				}
				written = op.end
			}
		}
	}
	if written < 0 {
		t.Errorf("%q: fsync returned, but no Append wrote it", rec)
		return
	}
	for _, op := range g.ops {
		if op.synced && op.start > written && op.end < ret {
			return
		}
	}
	t.Errorf("%q (written at tick %d): fsync returned at tick %d with no sync since; ops %+v", rec, written, ret, g.ops)
}

// newGatedTree returns a writable tree of a new leveldb log whose appends
// go through a gatedTable.
func newGatedTree(t *testing.T, refuse []byte) (*Tree, *gatedTable, string) {
	return newGatedTreeOf(t, codec.LevelDB, false, refuse)
}

// newGatedTreeOf is newGatedTree for a new file of format f (with a
// recordio trailer when trailer is set).
func newGatedTreeOf(t *testing.T, f codec.Format, trailer bool, refuse []byte) (*Tree, *gatedTable, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "w.log")
	tb, err := index.Create(context.Background(), p, f, trailer, index.Options{CacheDir: "-", Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedTable{Table: tb, gate: make(chan struct{}), refuse: refuse}
	tr, err := NewFile(p, g, Options{ReadWrite: true, Logger: codectest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr, g, p
}

// waitQueued waits until n closes wait behind the append in progress.
func waitQueued(t *testing.T, tr *Tree, n int) {
	t.Helper()
	q := &tr.Root().rd.commits
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		q.mu.Lock()
		k := len(q.waiting)
		q.mu.Unlock()
		if k == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d closes queued, want %d", k, n)
		}
	}
}

// closeAsync creates name in tr with data and flushes it (fsyncs it when
// sync) in a goroutine of wg, storing the record number and error.
func closeAsync(t *testing.T, tr *Tree, wg *sync.WaitGroup, name, data string, sync bool, rec *int64, errp *error) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, h, err := tr.Create(context.Background(), tr.Root(), name)
		if err != nil {
			t.Error(err)
			return
		}
		if _, err := h.WriteAt([]byte(data), 0); err != nil {
			t.Error(err)
		}
		if sync {
			*rec, *errp = h.Fsync(context.Background())
		} else {
			*rec, *errp = h.Flush(context.Background())
		}
		h.Close()
	}()
}

// waitAppending waits until the first Append of g has begun.
func waitAppending(g *gatedTable) { waitAppends(g, 1) }

// waitAppends waits until n Appends of g have begun.
func waitAppends(g *gatedTable, n int) {
	for g.mu.Lock(); len(g.calls) < n; g.mu.Lock() {
		g.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	g.mu.Unlock()
}

// checkGroup checks that g's Append calls took the numbers of records
// calls lists, one of them synced, and returns the n records of path.
func checkGroup(t *testing.T, g *gatedTable, path, calls string, n int) [][]byte {
	t.Helper()
	if fmt.Sprint(g.calls) != calls || g.syncs != 1 {
		t.Errorf("Append calls with %v records, %d synced; want %s, 1", g.calls, g.syncs, calls)
	}
	got := readBack(t, path)
	if len(got) != n {
		t.Fatalf("%d records, want %d", len(got), n)
	}
	return got
}

// TestGroupCommit: closes that arrive while an append runs go together in
// one Append (one sync when any of them asked), each getting its own
// record number.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	tr, g, path := newGatedTree(t, nil)
	const writers = 8
	recs := make([]int64, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	start := func(i int, sync bool) {
		closeAsync(t, tr, &wg, fmt.Sprintf("f%d", i), fmt.Sprintf("record of writer %d", i), sync, &recs[i], &errs[i])
	}
	start(0, false)
	waitAppending(g) // writer 0 leads, held in its Append
	for i := 1; i < writers; i++ {
		start(i, i == 3)
	}
	waitQueued(t, tr, writers-1)
	close(g.gate)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	got := checkGroup(t, g, path, "[1 7]", writers)
	for i, n := range recs {
		if want := fmt.Sprintf("record of writer %d", i); n < 0 || n >= writers || string(got[n]) != want {
			t.Errorf("writer %d told record %d, want the one holding %q", i, n, want)
		}
	}
}

// TestGroupCommitRefusal: a batch that fails is retried one record at a
// time, so only the refused record's close fails.
func TestGroupCommitRefusal(t *testing.T) {
	t.Parallel()
	tr, g, path := newGatedTree(t, []byte("bad"))
	errs := make([]error, 4)
	recs := make([]int64, 4)
	var wg sync.WaitGroup
	for i, data := range []string{"first", "good1", "bad", "good3"} {
		closeAsync(t, tr, &wg, fmt.Sprintf("f%d", i), data, false, &recs[i], &errs[i])
		if i == 0 {
			waitAppending(g)
		}
	}
	waitQueued(t, tr, 3)
	close(g.gate)
	wg.Wait()
	for i, err := range errs {
		if (err != nil) != (i == 2) {
			t.Errorf("close %d: %v", i, err)
		}
	}
	got := readBack(t, path)
	var s []string
	for _, r := range got {
		s = append(s, string(r))
	}
	if len(s) != 3 || s[0] != "first" {
		t.Errorf("records %q, want first and the two good ones", s)
	}
}

// TestGroupCommitFormats: in every writable format, closes that queue
// behind an append go in one Append, one sync for all, and their records
// land in the order the closes arrived, each close told its own record.
func TestGroupCommitFormats(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		f       codec.Format
		trailer bool
	}{{codec.LevelDB, false}, {codec.RecordIO, false}, {codec.RecordIO, true}, {codec.TFRecord, false}} {
		t.Run(fmt.Sprintf("%v/trailer=%v", c.f, c.trailer), func(t *testing.T) {
			t.Parallel()
			tr, g, path := newGatedTreeOf(t, c.f, c.trailer, nil)
			const writers = 6
			recs := make([]int64, writers)
			errs := make([]error, writers)
			var wg sync.WaitGroup
			for i := range writers {
				closeAsync(t, tr, &wg, fmt.Sprintf("f%d", i), fmt.Sprintf("close %d", i), i > 0, &recs[i], &errs[i])
				if i == 0 {
					waitAppending(g)
				} else {
					waitQueued(t, tr, i) // queued in this order
				}
			}
			close(g.gate)
			wg.Wait()
			for i, err := range errs {
				if err != nil || recs[i] != int64(i) {
					t.Errorf("close %d: record %d, %v; want record %d", i, recs[i], err, i)
				}
			}
			got := checkGroup(t, g, path, "[1 5]", writers)
			for i, r := range got {
				if want := fmt.Sprintf("close %d", i); string(r) != want {
					t.Errorf("record %d = %q, want %q", i, r, want)
				}
			}
		})
	}
}

// TestGroupCommitFails: when the source takes no record, every close of
// the group fails (none is told its record is in) and the file is as it
// was before the group.
func TestGroupCommitFails(t *testing.T) {
	t.Parallel()
	tr, g, path := newGatedTree(t, nil)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g.refuseAll = true
	const writers = 4
	errs := make([]error, writers)
	recs := make([]int64, writers)
	var wg sync.WaitGroup
	for i := range writers {
		closeAsync(t, tr, &wg, fmt.Sprintf("f%d", i), fmt.Sprintf("close %d", i), false, &recs[i], &errs[i])
		if i == 0 {
			waitAppending(g)
		}
	}
	waitQueued(t, tr, writers-1)
	close(g.gate)
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			t.Errorf("close %d succeeded (record %d) though the source took nothing", i, recs[i])
		}
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(before, after) {
		t.Errorf("the file changed under a failed group (%d -> %d bytes, %v)", len(before), len(after), err)
	}
}

// TestGroupFsyncsShareSync: fsyncs of 8 files that arrive while an append
// runs cost 2 syncs of the source in all, not 8: the 7 queued go in one
// Append with one sync. Each fsync returns only after a sync that started
// once its record was written.
func TestGroupFsyncsShareSync(t *testing.T) {
	t.Parallel()
	tr, g, path := newGatedTree(t, nil)
	const writers = 8
	ret := make([]int, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, h, err := tr.Create(context.Background(), tr.Root(), fmt.Sprintf("f%d", i))
			if err != nil {
				errs[i] = err
				return
			}
			defer h.Close()
			if _, err := h.WriteAt([]byte(fmt.Sprintf("fsynced %d", i)), 0); err != nil {
				errs[i] = err
				return
			}
			_, errs[i] = h.Fsync(context.Background())
			ret[i] = g.tick()
		}()
		if i == 0 {
			waitAppending(g) // writer 0 leads, held in its Append
		}
	}
	waitQueued(t, tr, writers-1)
	close(g.gate)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	if fmt.Sprint(g.calls) != "[1 7]" || g.syncs+g.syncCalls != 2 {
		t.Errorf("Append calls %v, %d synced, %d Sync calls; want [1 7] and 2 syncs in all", g.calls, g.syncs, g.syncCalls)
	}
	for i := range writers {
		g.checkDurable(t, fmt.Sprintf("fsynced %d", i), ret[i])
	}
	if got := readBack(t, path); len(got) != writers {
		t.Errorf("%d records, want %d", len(got), writers)
	}
}

// TestGroupFsyncAfterClose: an fsync of a file whose record a close of
// another descriptor already appended (without a sync) queues behind the
// append in progress like a close and shares the next batch's sync: no
// Sync of its own, and that sync starts after its record was written.
func TestGroupFsyncAfterClose(t *testing.T) {
	t.Parallel()
	tr, g, path := newGatedTree(t, nil)
	g.holdAt = 1
	_, a, err := tr.Create(context.Background(), tr.Root(), "a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.WriteAt([]byte("closed a"), 0); err != nil {
		t.Fatal(err)
	}
	if rec, err := a.Flush(context.Background()); err != nil || rec != 0 {
		t.Fatalf("flush of a: record %d, %v", rec, err)
	}
	var (
		wg   sync.WaitGroup
		recs [2]int64
		errs [3]error
		retA int
	)
	closeAsync(t, tr, &wg, "b", "fsynced b", true, &recs[0], &errs[0]) // held in its Append
	waitAppends(g, 2)
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, errs[2] = a.Fsync(context.Background())
		retA = g.tick()
	}()
	waitQueued(t, tr, 1)
	closeAsync(t, tr, &wg, "c", "fsynced c", true, &recs[1], &errs[1])
	waitQueued(t, tr, 2)
	close(g.gate)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("fsync %d: %v", i, err)
		}
	}
	if fmt.Sprint(g.calls) != "[1 1 1]" || g.syncs != 2 || g.syncCalls != 0 {
		t.Errorf("Append calls %v, %d synced, %d Sync calls; want [1 1 1], 2, 0", g.calls, g.syncs, g.syncCalls)
	}
	g.checkDurable(t, "closed a", retA)
	if got := readBack(t, path); len(got) != 3 {
		t.Errorf("%d records, want 3", len(got))
	}
}

// TestRecordFsyncSyncsSource: fsync(2) of a record file in a writable
// tree makes its source durable (a close appended it without a sync);
// in a read-only tree it has nothing to do.
func TestRecordFsyncSyncsSource(t *testing.T) {
	t.Parallel()
	tr, g, _ := newGatedTree(t, nil)
	close(g.gate)
	_, h, err := tr.Create(context.Background(), tr.Root(), "a")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.WriteAt([]byte("closed, not synced"), 0); err != nil {
		t.Fatal(err)
	}
	rec, err := h.Flush(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	before := g.syncs + g.syncCalls
	g.mu.Unlock()
	if err := tr.Fsync(context.Background(), Node{Kind: KindRecord, N: rec, rd: tr.Root().rd}); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	after := g.syncs + g.syncCalls
	g.mu.Unlock()
	if after != before+1 {
		t.Errorf("syncs of the source after a record's fsync: %d, want %d", after, before+1)
	}

	ro := newFakeTree(t, 1)
	if err := ro.Fsync(context.Background(), Node{Kind: KindRecord, N: 0, rd: ro.Root().rd}); err != nil {
		t.Errorf("fsync of a record in a read-only tree: %v", err)
	}
}
