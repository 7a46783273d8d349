package codec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
)

// rioTransformer is one parsed transformer spec ("name" or "name config").
type rioTransformer struct {
	spec  string
	name  string
	level int
}

// parseTransformer parses one transformer spec. forWrite also validates the
// config (the reference untransformers ignore it).
func parseTransformer(spec string, forWrite bool) (rioTransformer, error) {
	name, config, hasConfig := strings.Cut(spec, " ")
	t := rioTransformer{spec: spec, name: name, level: -1}
	switch name {
	case "flate", "zstd":
	default:
		return t, fmt.Errorf("%w: recordio transformer %q not found", ErrUnsupported, spec)
	}
	if !forWrite || !hasConfig {
		return t, nil
	}
	lvl, err := strconv.Atoi(config)
	if err != nil {
		return t, fmt.Errorf("codec: recordio transformer %q: bad level %q", spec, config)
	}
	switch {
	case name == "flate" && (lvl < -2 || lvl > 9):
		return t, fmt.Errorf("codec: recordio transformer %q: flate level must be -2..9", spec)
	case name == "zstd" && (lvl < -1 || lvl > 22):
		return t, fmt.Errorf("codec: recordio transformer %q: zstd level must be -1..22", spec)
	}
	t.level = lvl
	return t, nil
}

// parseTransformers parses a chain in application order.
func parseTransformers(specs []string, forWrite bool) ([]rioTransformer, error) {
	out := make([]rioTransformer, 0, len(specs))
	for _, s := range specs {
		t, err := parseTransformer(s, forWrite)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// applyTransformers compresses a raw block with the chain, first to last.
func applyTransformers(chain []rioTransformer, raw []byte) ([]byte, error) {
	b := raw
	for _, t := range chain {
		var err error
		switch t.name {
		case "flate":
			b, err = flateCompress(b, t.level)
		case "zstd":
			b, err = zstdCompress(b, t.level)
		}
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// undoTransformers undoes the chain, last first. Every intermediate and the
// final result are capped at limit bytes (ErrLimit).
func undoTransformers(chain []rioTransformer, stored []byte, limit int64) ([]byte, error) {
	b := stored
	for i := len(chain) - 1; i >= 0; i-- {
		var err error
		switch chain[i].name {
		case "flate":
			b, err = flateDecompress(b, limit)
		case "zstd":
			b, err = zstdDecompress(b, limit)
		default:
			err = fmt.Errorf("%w: recordio transformer %q not found", ErrUnsupported, chain[i].spec)
		}
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

func flateCompress(b []byte, level int) ([]byte, error) {
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, level)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// flateDecompress inflates a raw DEFLATE stream, refusing output past limit.
func flateDecompress(b []byte, limit int64) ([]byte, error) {
	r := flate.NewReader(bytes.NewReader(b))
	defer r.Close()
	var out bytes.Buffer
	out.Grow(int(min(limit, int64(len(b))*4+64)))
	n, err := out.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w: flate: %v", ErrCorrupt, err)
	}
	if n > limit {
		return nil, fmt.Errorf("%w: flate block decodes past %d bytes", ErrLimit, limit)
	}
	return out.Bytes(), nil
}

var (
	zstdEncMu sync.Mutex
	zstdEncs  = map[int]*zstd.Encoder{}
	zstdDecMu sync.Mutex
	zstdDecs  = map[int64]*zstd.Decoder{}
)

func zstdCompress(b []byte, level int) ([]byte, error) {
	if level < 0 {
		level = 5 // the reference's default
	}
	zstdEncMu.Lock()
	e, ok := zstdEncs[level]
	if !ok {
		var err error
		e, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
			zstd.WithEncoderConcurrency(1))
		if err != nil {
			zstdEncMu.Unlock()
			return nil, err
		}
		zstdEncs[level] = e
	}
	zstdEncMu.Unlock()
	return e.EncodeAll(b, nil), nil
}

// zstdDecoder returns a shared decoder whose output is capped at limit.
func zstdDecoder(limit int64) (*zstd.Decoder, error) {
	zstdDecMu.Lock()
	defer zstdDecMu.Unlock()
	if d, ok := zstdDecs[limit]; ok {
		return d, nil
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxMemory(uint64(max(limit, 1))),
		// Frames without a content size declare a window (8 MiB at the
		// reference's default level); allow that much even under a smaller cap.
		zstd.WithDecoderMaxWindow(uint64(max(limit, 8<<20))))
	if err != nil {
		return nil, err
	}
	if len(zstdDecs) > 8 {
		clear(zstdDecs)
	}
	zstdDecs[limit] = d
	return d, nil
}

// zstdDecompress decodes one or more zstd frames, with or without content
// size and checksum, refusing output past limit.
func zstdDecompress(b []byte, limit int64) ([]byte, error) {
	d, err := zstdDecoder(limit)
	if err != nil {
		return nil, err
	}
	out, err := d.DecodeAll(b, nil)
	if err != nil {
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
			return nil, fmt.Errorf("%w: zstd block decodes past %d bytes", ErrLimit, limit)
		}
		return nil, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("%w: zstd block decodes past %d bytes", ErrLimit, limit)
	}
	return out, nil
}
