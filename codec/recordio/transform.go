package recordio

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/recfs/recfs/codec"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
)

// transformer is one parsed transformer spec ("name" or "name config").
type transformer struct {
	spec  string
	name  string
	level int
}

// parseTransformer parses one transformer spec. forWrite also validates the
// config (the reference untransformers ignore it).
func parseTransformer(spec string, forWrite bool) (transformer, error) {
	name, config, hasConfig := strings.Cut(spec, " ")
	t := transformer{spec: spec, name: name, level: -1}
	switch name {
	case "flate", "zstd":
	default:
		return t, fmt.Errorf("%w: recordio transformer %q not found", codec.ErrUnsupported, spec)
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
func parseTransformers(specs []string, forWrite bool) ([]transformer, error) {
	out := make([]transformer, 0, len(specs))
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
func applyTransformers(chain []transformer, raw []byte) ([]byte, error) {
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

// flateLen returns the inflated length of a raw DEFLATE stream without
// keeping the output, refusing output past limit.
func flateLen(b []byte, limit int64) (int64, error) {
	r := flate.NewReader(bytes.NewReader(b))
	defer r.Close()
	n, err := io.Copy(io.Discard, io.LimitReader(r, limit+1))
	if err != nil {
		return 0, fmt.Errorf("%w: flate: %v", codec.ErrCorrupt, err)
	}
	if n > limit {
		return 0, fmt.Errorf("%w: flate block decodes past %d bytes", codec.ErrLimit, limit)
	}
	return n, nil
}

var (
	zstdEncMu sync.Mutex
	zstdEncs  = map[int]*zstd.Encoder{}
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
