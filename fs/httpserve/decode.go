package httpserve

import (
	"container/list"
	"context"
	"strings"
	"sync"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/fs"
)

// Decoding records for the browse page and decoded searches: the records
// of a record directory, read through the tree, are decode.Records, and
// Options.Decoders opens a session over them, kept per directory.

// maxSessions bounds the decoding sessions kept.
const maxSessions = 32

// treeRecords are the records of one record directory as the tree serves
// them. Their reads do not stop: a session's detection and what a
// stateful decoder learns of the records before the one rendered must not
// end early with one request (see session.render).
type treeRecords struct {
	h     *Handler
	dir   fs.Node
	count int64
}

func (tr *treeRecords) Len() int64 { return tr.count }

func (tr *treeRecords) Size(n int64) int64 {
	size, _ := tr.size(context.Background(), n)
	return size
}

// size returns the size of record n as Getattr gives it with ctx.
func (tr *treeRecords) size(ctx context.Context, n int64) (int64, error) {
	a, err := tr.h.t.Getattr(ctx, tr.dir.Record(n))
	if err != nil {
		return 0, err
	}
	return a.Size, nil
}

func (tr *treeRecords) ReadAt(n int64, p []byte, off int64) (int, error) {
	return tr.h.t.ReadAt(context.Background(), tr.dir.Record(n), p, off)
}

// requestRecords are treeRecords whose record n, the one a request
// renders, is sized and read with the request's context: a client gone
// stops that read (a long span of a compressed file) instead of leaving
// the server at it. A size that fails (the request given up, or the
// record unreadable) fails the reads of n after it, so that a rendering
// never goes on with a size of 0 in place of the record.
type requestRecords struct {
	*treeRecords
	ctx     context.Context
	n       int64
	sizeErr error
}

func (r *requestRecords) Size(n int64) int64 {
	if n != r.n {
		return r.treeRecords.Size(n)
	}
	size, err := r.size(r.ctx, n)
	if err != nil {
		r.sizeErr = err
	}
	return size
}

func (r *requestRecords) ReadAt(n int64, p []byte, off int64) (int, error) {
	if n != r.n {
		return r.treeRecords.ReadAt(n, p, off)
	}
	if r.sizeErr != nil {
		return 0, r.sizeErr
	}
	return r.h.t.ReadAt(r.ctx, r.dir.Record(n), p, off)
}

// sessions keeps the decoding session of recently decoded directories.
type sessions struct {
	h   *Handler
	mu  sync.Mutex
	lru *list.List // of *session
}

type session struct {
	dir   fs.Node
	epoch uint64
	count int64
	recs  *treeRecords
	s     *decode.Session // nil: the decoder chose to leave the records raw
	why   string
	err   error
	mu    sync.Mutex // one rendering at a time: sessions learn in order
}

func newSessions(h *Handler) *sessions { return &sessions{h: h, lru: list.New()} }

// get returns the session of the record directory dir (of count records
// now), opening it when needed; nil without a decoder plan.
func (ss *sessions) get(ctx context.Context, dir fs.Node, count int64, path string) *session {
	if ss.h.o.Decoders == nil {
		return nil
	}
	epoch := ss.h.o.Stamps.Of(dir).Epoch
	ss.mu.Lock()
	for e := ss.lru.Front(); e != nil; e = e.Next() {
		s := e.Value.(*session)
		if s.dir == dir && s.epoch == epoch {
			s.count = max(s.count, count)
			s.recs.count = s.count
			ss.lru.MoveToFront(e)
			ss.mu.Unlock()
			return s
		}
	}
	ss.mu.Unlock()
	s := &session{dir: dir, epoch: epoch, count: count, recs: &treeRecords{h: ss.h, dir: dir, count: count}}
	format := ""
	if in, err := ss.h.info(ctx, dir); err == nil {
		format = in.format
	}
	env := decode.Env{Path: path}
	if ss.h.o.Env != nil {
		env = ss.h.o.Env(path, format)
	} else if f, err := codec.ParseFormat(format); err == nil {
		env.Format = f
	}
	s.s, s.why, s.err = ss.h.o.Decoders.Open(s.recs, env)
	ss.mu.Lock()
	ss.lru.PushFront(s)
	for ss.lru.Len() > maxSessions {
		ss.lru.Remove(ss.lru.Back())
	}
	ss.mu.Unlock()
	return s
}

// render returns record n rendered by the session, its decoder's name, or
// an error. Record n is sized and read with ctx (requestRecords): a
// request given up stops its read and fails the rendering; the records a
// stateful decoder learns before n are read whole.
func (s *session) render(ctx context.Context, n int64) (text []byte, name string, err error) {
	if s.err != nil {
		return nil, "", s.err
	}
	if s.s == nil {
		return nil, "", errNoDecoder{s.why}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, s.s.Name(), err // given up while it waited
	}
	text, err = s.s.Render(nil, &requestRecords{treeRecords: s.recs, ctx: ctx, n: n}, 0, n)
	return text, s.s.Name(), err
}

// errNoDecoder says why no decoder renders a directory's records.
type errNoDecoder struct{ why string }

func (e errNoDecoder) Error() string {
	return "no decoder: " + strings.TrimSpace(e.why)
}
