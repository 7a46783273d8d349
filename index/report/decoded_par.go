package report

import (
	"bufio"
	"context"
	"sync"
)

// parChunk bounds the payload bytes (plus parFrame a record) of one chunk
// of a parallel rendering: small, as the renderings of a few chunks are
// held at once (fresh memory costs a page fault a page), yet many records
// for one hand-over between goroutines. A worker's cursor reads a
// megabyte, so that its next chunks are mostly in that one read.
const (
	parChunk   = 128 << 10
	parFrame   = 32
	parRecords = 1 << 12 // and its records, for files of empty ones
)

// chunk is a run of records one worker renders, and its rendering.
type chunk struct {
	rs   []Range
	size int64 // payload bytes (with parFrame a record), for the buffer
	out  []byte
	err  error
	done chan struct{} // closed when out and err are set
}

// writePar writes the records rs rendered on workers goroutines, each a
// chunk at a time with its own cursor, in order: the bytes sequential
// rendering writes, up to and including the first record that fails. At
// most 2×workers chunks are rendered or held ahead of the one being
// written, their buffers reused.
// It returns when every goroutine it started has ended.
func (r *renderer) writePar(ctx context.Context, w *bufio.Writer, rs []Range, workers int) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	jobs := make(chan *chunk)
	order := make(chan *chunk, workers)
	free := make(chan []byte, 2*workers+1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(order)
		defer close(jobs)
		r.chunks(rs, func(c *chunk) bool {
			select {
			case order <- c:
			case <-ctx.Done():
				return false
			}
			select {
			case jobs <- c:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wr := renderer{m: r.m, s: r.s, t: r.t, cur: r.t.Cursor(), path: r.path}
			for c := range jobs {
				var buf []byte
				select {
				case buf = <-free:
				default:
				}
				if want := int(c.size + c.size/4 + 4096); cap(buf) < want {
					buf = make([]byte, 0, want) // text is about the payload's size
				}
				c.out, c.err = wr.run(ctx, buf[:0], c.rs)
				close(c.done)
			}
		}()
	}
	for c := range order {
		select {
		case <-c.done:
		case <-ctx.Done():
			w.Flush()
			return ctx.Err()
		}
		if _, err := w.Write(c.out); err != nil {
			return err
		}
		if c.err != nil {
			w.Flush()
			return c.err
		}
		select {
		case free <- c.out:
		default:
		}
	}
	return nil
}

// chunks cuts rs into chunks and hands each to emit, in order, until emit
// returns false.
func (r *renderer) chunks(rs []Range, emit func(*chunk) bool) {
	c := &chunk{done: make(chan struct{})}
	var size, recs int64
	for _, rg := range rs {
		lo := rg.Lo
		for n := rg.Lo; n < rg.Hi; n++ {
			size += max(r.t.Size(n), 0) + parFrame
			recs++
			if size < parChunk && recs < parRecords {
				continue
			}
			c.rs, c.size = append(c.rs, Range{Lo: lo, Hi: n + 1}), size
			if !emit(c) {
				return
			}
			c, lo, size, recs = &chunk{done: make(chan struct{})}, n+1, 0, 0
		}
		if lo < rg.Hi {
			c.rs, c.size = append(c.rs, Range{Lo: lo, Hi: rg.Hi}), size
		}
	}
	if len(c.rs) > 0 {
		emit(c)
	}
}
