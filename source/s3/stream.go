package s3

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/recfs/recfs/source"
)

// streamAttempts bounds the GETs of one stream: a body cut off midway is
// requested again from where it stopped.
const streamAttempts = 3

var _ source.Streamer = (*Object)(nil)

// Stream returns the object's bytes from off to its end (of the opened
// version) for one pass in order: the blocks the cache holds from off on
// are read from it, the rest with one GET pinned to the version, its body
// read as it arrives (a body cut short is asked for again from where it
// stopped, up to streamAttempts GETs). Nothing it reads enters the cache:
// a pass over the whole object does not evict what readers use. A changed
// object fails the stream with an error wrapping source.ErrChanged.
func (o *Object) Stream(ctx context.Context, off int64) (io.ReadCloser, error) {
	if off < 0 || off > o.size {
		return nil, fmt.Errorf("s3: stream of %s from %d: outside its %d bytes", o.url, off, o.size)
	}
	return &objectStream{o: o, ctx: ctx, off: off}, nil
}

// objectStream reads an object in order, see Object.Stream.
type objectStream struct {
	o        *Object
	ctx      context.Context
	off      int64
	body     io.ReadCloser
	attempts int
	err      error
}

func (s *objectStream) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.off >= s.o.size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if s.body == nil {
		if n := s.fromCache(p); n > 0 {
			s.off += int64(n)
			return n, nil
		}
		if s.err = s.open(); s.err != nil {
			return 0, s.err
		}
	}
	p = p[:min(int64(len(p)), s.o.size-s.off)]
	n, err := s.body.Read(p)
	s.off += int64(n)
	s.o.stats.bytes.Add(int64(n))
	if err == nil || (errors.Is(err, io.EOF) && s.off == s.o.size) {
		return n, nil
	}
	// The body ended early or failed: the next read asks again.
	s.body.Close()
	s.body = nil
	if cerr := s.ctx.Err(); cerr != nil {
		s.err = cerr
	} else if s.attempts >= streamAttempts {
		s.err = fmt.Errorf("s3: GET %s from %d: %w", s.o.url, s.off, err)
	}
	if n > 0 {
		return n, nil
	}
	return s.Read(p)
}

// fromCache copies into p what the cache holds at the stream's offset.
func (s *objectStream) fromCache(p []byte) int {
	o := s.o
	bs := o.opt.BlockSize
	o.mu.Lock()
	defer o.mu.Unlock()
	b, ok := o.blocks[s.off/bs]
	if !ok || b.elem == nil {
		return 0
	}
	return copy(p, b.data[s.off-b.idx*bs:])
}

// open starts a GET of the rest of the object.
func (s *objectStream) open() error {
	o := s.o
	if o.changed.Load() {
		return o.errChanged()
	}
	s.attempts++
	in := o.getInput(s.off, o.size)
	o.stats.gets.Add(1)
	out, err := o.api.GetObject(s.ctx, in)
	if err != nil {
		switch httpStatus(err) {
		case 412, 416, 404:
			o.markChanged("a streaming GET found another version")
			return o.errChanged()
		}
		return fmt.Errorf("s3: GET %s %s: %w", o.url, *in.Range, err)
	}
	if o.etag != "" && out.ETag != nil && *out.ETag != o.etag {
		out.Body.Close()
		o.markChanged("a GET answered with ETag " + *out.ETag)
		return o.errChanged()
	}
	if err := o.checkRange(aws.ToString(out.ContentRange), s.off, o.size); err != nil {
		out.Body.Close()
		return err
	}
	s.body = out.Body
	return nil
}

func (s *objectStream) Close() error {
	if s.body != nil {
		s.body.Close()
		s.body = nil
	}
	if s.err == nil {
		s.err = errors.New("s3: stream closed")
	}
	return nil
}
