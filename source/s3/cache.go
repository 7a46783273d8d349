package s3

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/source"
)

// block is one BlockSize slice of the object. done closes when data or err
// is set; the block is in the LRU (elem != nil) only when filled. A block
// that failed stays in the map until failed+failMemory, so that the read
// the kernel retries at once fails at once too; a read after it fetches
// again.
type block struct {
	idx    int64
	done   chan struct{}
	data   []byte
	err    error
	failed time.Time
	elem   *list.Element
}

// failMemory is how long a failed block fails reads without a new fetch.
const failMemory = time.Second

// stream is one sequential reader the object is following: start is where
// its run of adjacent reads began, next where its last read ended, window
// how many blocks its requests span (0: not yet sequential).
type stream struct {
	start  int64
	next   int64
	window int64
	used   uint64
}

// ReadAt reads from the cache, fetching missing blocks with ranged GETs
// pinned to the opened version. Reads at or past the opened size give
// io.EOF; a changed object gives an error wrapping source.ErrChanged.
func (o *Object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("s3: negative offset %d", off)
	}
	if o.changed.Load() {
		return 0, o.errChanged()
	}
	if err := o.ctx.Err(); err != nil {
		return 0, fmt.Errorf("s3: %s: closed", o.url)
	}
	if off >= o.size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	end := min(off+int64(len(p)), o.size)
	bs := o.opt.BlockSize
	b0, b1 := off/bs, (end-1)/bs
	need := o.plan(off, end, b0, b1)
	n := 0
	for _, b := range need {
		if err := o.wait(b); err != nil {
			return n, err
		}
		if b.err != nil {
			return n, b.err
		}
		if o.changed.Load() {
			return n, o.errChanged()
		}
		lo := max(off, b.idx*bs) - b.idx*bs
		hi := min(end, (b.idx+1)*bs) - b.idx*bs
		n += copy(p[n:], b.data[lo:hi])
	}
	if end == o.size && n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// wait waits for block b to be filled or to fail, at most RetryBudget (a
// fetch that brings no block within it fails anyway; this bounds a read
// of a block deep in a long GET that crawls).
func (o *Object) wait(b *block) error {
	select {
	case <-b.done:
		return nil
	default:
	}
	t := time.NewTimer(o.opt.RetryBudget)
	defer t.Stop()
	select {
	case <-b.done:
		return nil
	case <-o.ctx.Done():
		return fmt.Errorf("s3: %s: closed", o.url)
	case <-t.C:
		return fmt.Errorf("s3: %s: block at %d: %w", o.url, b.idx*o.opt.BlockSize, budgetTimeout(o.opt.RetryBudget, ""))
	}
}

// plan returns the blocks b0..b1 (existing or placeholders) and starts the
// GETs for the missing ones, widened by read-ahead for sequential readers.
func (o *Object) plan(off, end, b0, b1 int64) []*block {
	bs := o.opt.BlockSize
	last := (o.size - 1) / bs
	o.mu.Lock()
	defer o.mu.Unlock()
	w := o.follow(off, end)
	need := make([]*block, 0, b1-b0+1)
	var runs [][2]int64 // [first, count] of new placeholders
	add := func(i int64) {
		if n := len(runs); n > 0 && runs[n-1][0]+runs[n-1][1] == i && runs[n-1][1]*bs < o.opt.MaxRequest {
			runs[n-1][1]++
			return
		}
		runs = append(runs, [2]int64{i, 1})
	}
	if w > 0 && b0 > 0 {
		// A sequential reader is done with the block before this read:
		// evict it first, before blocks read ahead and not yet used.
		if prev, ok := o.blocks[b0-1]; ok && prev.elem != nil {
			o.lru.MoveToFront(prev.elem)
		}
	}
	for i := b0; i <= b1; i++ {
		b, ok := o.blocks[i]
		if ok && b.err != nil && time.Since(b.failed) >= failMemory {
			ok = false
		}
		if !ok {
			b = &block{idx: i, done: make(chan struct{})}
			o.blocks[i] = b
			add(i)
		} else if b.elem != nil {
			o.lru.MoveToBack(b.elem)
		}
		need = append(need, b)
	}
	if w > 0 {
		// Read ahead: when a block within one window past the read is
		// missing, fetch a whole window from it on.
		first := int64(-1)
		for i := b1 + 1; i <= min(b1+w, last); i++ {
			if _, ok := o.blocks[i]; !ok {
				first = i
				break
			}
		}
		if first >= 0 {
			for i := first; i <= min(first+w-1, last); i++ {
				if _, ok := o.blocks[i]; ok {
					break
				}
				o.blocks[i] = &block{idx: i, done: make(chan struct{})}
				add(i)
			}
		}
	}
	for _, r := range runs {
		bl := make([]*block, r[1])
		for j := range bl {
			bl[j] = o.blocks[r[0]+int64(j)]
		}
		go o.fetch(bl)
	}
	return need
}

// follow matches a read against the sequential streams and returns the
// read-ahead window in blocks (0 for a random read). Called with mu held.
func (o *Object) follow(off, end int64) int64 {
	bs := o.opt.BlockSize
	maxW := o.opt.MaxRequest / bs
	// Room in the budget for four streams with two windows ahead each.
	if lim := o.opt.CacheBytes / (8 * bs); maxW > lim {
		maxW = max(lim, 1)
	}
	o.tick++
	oldest := 0
	for i := range o.streams {
		s := &o.streams[i]
		if s.used != 0 && off >= s.next-bs && off <= s.next+bs {
			s.next, s.used = end, o.tick
			// Read ahead only once the run is longer than a short record
			// would be: a cat of one record fetches only its blocks.
			if end-s.start >= seqAfter*bs {
				s.window = min(max(2*s.window, 2), maxW)
			}
			return s.window
		}
		if s.used < o.streams[oldest].used {
			oldest = i
		}
	}
	o.streams[oldest] = stream{start: off, next: end, used: o.tick}
	return 0
}

// fetch GETs the consecutive blocks bl with one ranged request; each block
// is ready for its readers as soon as its bytes have arrived (get publishes
// it), so that a sequential reader consumes a large GET while it streams.
// A failed attempt (a stall past a deadline, a cut connection, a 5xx) is
// abandoned and retried from the first block not yet filled, after a
// backoff pause, on another connection. The fetch gives up when
// MaxAttempts attempts in a row filled no block, or RetryBudget passed
// without one; the blocks not filled then fail their readers, and reads
// for failMemory more, after which a read fetches them again.
func (o *Object) fetch(bl []*block) {
	ctx, cancel := context.WithCancelCause(o.ctx)
	defer cancel(nil)
	p := newProgressWatch(o.opt.RetryBudget, cancel)
	defer p.stop()
	filled, fails := 0, 0
	var err, prev error
	budgetErr := func() bool {
		te, ok := context.Cause(ctx).(*TimeoutError)
		if ok {
			err = &TimeoutError{Name: te.Name, Op: te.Op, After: te.After}
			if prev != nil {
				err.(*TimeoutError).Last = prev.Error()
			}
		}
		return ok
	}
	for {
		var n int
		n, err = o.get(ctx, bl[filled:], p)
		filled += n
		if n > 0 {
			fails = 0
		}
		if err == nil {
			return
		}
		if budgetErr() {
			break
		}
		prev = err
		if o.ctx.Err() != nil || !retryableGet(err) {
			break
		}
		if fails++; fails >= o.opt.MaxAttempts {
			err = fmt.Errorf("%w (after %d attempts)", err, fails)
			break
		}
		d := backoff(fails)
		logrus.WithFields(logrus.Fields{"object": o.url, "attempt": fails, "retry_in": d}).WithError(err).Debug("s3: GET failed; retrying")
		t := time.NewTimer(d)
		select {
		case <-t.C:
			continue
		case <-ctx.Done():
			t.Stop()
		}
		budgetErr()
		break
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	for _, b := range bl[filled:] {
		b.err, b.failed = err, now
		close(b.done)
	}
}

// retryableGet tells whether another attempt of a failed GET may succeed:
// not when the object changed or the store answered beside the range, nor
// on a 4xx other than 429.
func retryableGet(err error) bool {
	if errors.Is(err, source.ErrChanged) || errors.Is(err, errNoRange) {
		return false
	}
	s := httpStatus(err)
	return s == 0 || s == 429 || s >= 500
}

// progressWatch cancels a fetch when budget passes without a block.
type progressWatch struct {
	budget time.Duration
	last   atomic.Int64 // unix nanoseconds of the last block (or the start)
	timer  *time.Timer
}

func newProgressWatch(budget time.Duration, cancel context.CancelCauseFunc) *progressWatch {
	p := &progressWatch{budget: budget}
	p.last.Store(time.Now().UnixNano())
	p.timer = time.AfterFunc(budget, func() {
		due := time.Unix(0, p.last.Load()).Add(budget)
		if d := time.Until(due); d > 0 {
			p.timer.Reset(d)
			return
		}
		cancel(budgetTimeout(budget, ""))
	})
	return p
}

// block records that a block arrived.
func (p *progressWatch) block() { p.last.Store(time.Now().UnixNano()) }

func (p *progressWatch) stop() { p.timer.Stop() }

// publish makes the filled block b ready: cached (unless it was dropped
// meanwhile), its readers woken, and the cache trimmed to its budget.
func (o *Object) publish(b *block) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.blocks[b.idx] == b {
		b.elem = o.lru.PushBack(b)
		o.cached += int64(len(b.data))
	}
	close(b.done)
	for o.cached > o.opt.CacheBytes && o.lru.Len() > 0 {
		old := o.lru.Remove(o.lru.Front()).(*block)
		old.elem = nil
		o.cached -= int64(len(old.data))
		if o.blocks[old.idx] == old {
			delete(o.blocks, old.idx)
		}
	}
}

// get performs one attempt: a GET of the blocks bl into their buffers,
// publishing each as it is filled; it returns how many were.
func (o *Object) get(ctx context.Context, bl []*block, p *progressWatch) (int, error) {
	select {
	case o.sem <- struct{}{}:
	case <-ctx.Done():
		return 0, fmt.Errorf("s3: %s: %w", o.url, context.Cause(ctx))
	}
	defer func() { <-o.sem }()
	if o.changed.Load() {
		return 0, o.errChanged()
	}
	bs := o.opt.BlockSize
	start := bl[0].idx * bs
	stop := min((bl[len(bl)-1].idx+1)*bs, o.size) // exclusive
	in := o.getInput(start, stop)
	o.stats.gets.Add(1)
	// fetch retries, each time from the first block still missing.
	out, err := o.api.GetObject(ctx, in, func(so *s3.Options) { so.Retryer = aws.NopRetryer{} })
	if err != nil {
		switch httpStatus(err) {
		case 412:
			o.markChanged("HTTP 412 on a GET pinned with If-Match")
			return 0, o.errChanged()
		case 416, 404:
			o.markChanged("the opened range is gone")
			return 0, o.errChanged()
		}
		return 0, fmt.Errorf("s3: GET %s %s: %w", o.url, *in.Range, err)
	}
	defer out.Body.Close()
	// A store that ignores If-Match must still not mix versions: the
	// response names its version and range, and both must be ours.
	if o.etag != "" && out.ETag != nil && *out.ETag != o.etag {
		o.markChanged("a GET answered with ETag " + *out.ETag)
		return 0, o.errChanged()
	}
	if err := o.checkRange(aws.ToString(out.ContentRange), start, stop); err != nil {
		return 0, err
	}
	for i, b := range bl {
		n := min(bs, o.size-b.idx*bs)
		buf := make([]byte, n)
		if _, err := io.ReadFull(out.Body, buf); err != nil {
			return i, fmt.Errorf("s3: GET %s %s: body: %w", o.url, *in.Range, err)
		}
		b.data = buf
		o.stats.bytes.Add(n)
		o.publish(b)
		p.block()
	}
	return len(bl), nil
}

// getInput is a GET of bytes [start, stop) pinned to the opened version.
func (o *Object) getInput(start, stop int64) *s3.GetObjectInput {
	in := &s3.GetObjectInput{Bucket: &o.bucket, Key: &o.key,
		Range: aws.String("bytes=" + strconv.FormatInt(start, 10) + "-" + strconv.FormatInt(stop-1, 10))}
	if o.etag != "" {
		in.IfMatch = aws.String(o.etag)
	}
	if o.versionID != "" {
		in.VersionId = aws.String(o.versionID)
	}
	if o.etag == "" && o.versionID == "" && !o.modTime.IsZero() {
		in.IfUnmodifiedSince = aws.Time(o.modTime)
	}
	return in
}

// checkRange verifies a Content-Range header "bytes a-b/total" against the
// request and the opened size.
func (o *Object) checkRange(cr string, start, stop int64) error {
	want := "bytes " + strconv.FormatInt(start, 10) + "-" + strconv.FormatInt(stop-1, 10) + "/"
	if cr == "" {
		if start == 0 && stop == o.size {
			return nil // a whole-object 200 is acceptable
		}
		return fmt.Errorf("s3: GET %s: %w", o.url, errNoRange)
	}
	total, ok := strings.CutPrefix(cr, want)
	if !ok {
		return fmt.Errorf("s3: GET %s: Content-Range %q, want %q…: %w", o.url, cr, want, errNoRange)
	}
	if total != strconv.FormatInt(o.size, 10) {
		o.markChanged("Content-Range total " + total)
		return o.errChanged()
	}
	return nil
}

// seqAfter is how many blocks a run of adjacent reads spans before the
// object reads ahead for it.
const seqAfter = 2

var errNoRange = errors.New("store did not honour the range")
