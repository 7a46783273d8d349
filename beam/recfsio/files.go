package recfsio

import (
	"context"
	"sort"
	"sync"

	"github.com/recfs/recfs/index"
)

// sumStep is how many records one payload checkpoint of an open file
// covers: the payload of any record range costs at most two walks of
// sumStep records, and the checkpoints 8 bytes per sumStep records.
const sumStep = 1024

// maxIdle bounds the tables a worker keeps open while no bundle uses them.
const maxIdle = 64

// file is one open table in a worker, with its payload checkpoints.
type file struct {
	t    *index.Table
	sums []int64 // sums[i] = payload bytes of records [0, i*sumStep)

	// Guarded by files.Mutex.
	ready chan struct{} // closed when t (or err) is set
	err   error
	refs  int
	used  uint64 // tick of the last release, for eviction
}

// files is the worker's open tables, keyed by path and options.
var files struct {
	sync.Mutex
	m    map[fileKey]*file
	tick uint64
}

type fileKey struct {
	path string
	opt  Options
}

// acquire returns the open table of path (opening it once per worker),
// and what releases it.
func acquire(ctx context.Context, path string, o Options) (*file, func(), error) {
	k := fileKey{path, o}
	files.Lock()
	if files.m == nil {
		files.m = map[fileKey]*file{}
	}
	f := files.m[k]
	if f == nil {
		f = &file{ready: make(chan struct{})}
		files.m[k] = f
		f.refs++
		files.Unlock()
		f.t, f.err = openTable(ctx, path, o)
		if f.err == nil {
			f.sums = checkpoints(f.t)
		}
		files.Lock()
		close(f.ready)
		if f.err != nil {
			delete(files.m, k)
		}
	} else {
		f.refs++
	}
	files.Unlock()
	select {
	case <-f.ready:
	case <-ctx.Done():
		release(k, f)
		return nil, nil, ctx.Err()
	}
	if f.err != nil {
		release(k, f)
		return nil, nil, f.err
	}
	return f, func() { release(k, f) }, nil
}

// release drops one reference to f and closes the least recently used
// idle tables past maxIdle.
func release(k fileKey, f *file) {
	files.Lock()
	defer files.Unlock()
	files.tick++
	f.refs--
	f.used = files.tick
	var idle []fileKey
	for k, f := range files.m {
		if f.refs == 0 && f.t != nil {
			idle = append(idle, k)
		}
	}
	if len(idle) <= maxIdle {
		return
	}
	sort.Slice(idle, func(i, j int) bool { return files.m[idle[i]].used < files.m[idle[j]].used })
	for _, k := range idle[:len(idle)-maxIdle] {
		files.m[k].t.Close()
		delete(files.m, k)
	}
}

// checkpoints returns the payload of records [0, i*sumStep) for every i.
func checkpoints(t *index.Table) []int64 {
	n := t.Len()
	sums := make([]int64, 1, n/sumStep+1)
	var s int64
	for k := int64(0); k < n; k++ {
		s += t.Size(k)
		if (k+1)%sumStep == 0 {
			sums = append(sums, s)
		}
	}
	return sums
}

// upto returns the payload bytes of records [0, n).
func (f *file) upto(n int64) int64 {
	i := n / sumStep
	s := f.sums[i]
	for k := i * sumStep; k < n; k++ {
		s += f.t.Size(k)
	}
	return s
}

// payload returns the payload bytes of records [a, b).
func (f *file) payload(a, b int64) int64 {
	if b <= a {
		return 0
	}
	return f.upto(b) - f.upto(a)
}

// cuts returns the record numbers where [a, b) is cut into ranges of
// about size payload bytes: a, then each record where the payload since
// the last cut reaches size, then b. A last range of at most size/4 is
// merged into the one before it, as textio does.
func (f *file) cuts(a, b, size int64) []int64 {
	c := []int64{a}
	for at := a; at < b; {
		base := f.upto(at)
		// The first record past at whose range [at, next) holds size bytes.
		next := at + 1 + int64(sort.Search(int(b-at-1), func(i int) bool {
			return f.upto(at+1+int64(i))-base >= size
		}))
		c = append(c, next)
		at = next
	}
	if len(c) > 2 && f.payload(c[len(c)-2], b) <= size/4 {
		c = append(c[:len(c)-2], b)
	}
	return c
}
