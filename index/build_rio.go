package index

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/recfs/recfs/codec/recordio"

	"github.com/recfs/recfs/codec"
)

// buildRIO indexes a grailbio recordio file (current or legacy format).
func buildRIO(ctx context.Context, r io.ReaderAt, size int64, f codec.Format, o Options) (s *snapshot, err error) {
	defer recoverFault(guardFault(), &err)
	return buildRIOUnguarded(ctx, r, size, f, o)
}

// buildRIOUnguarded does the work of buildRIO.
func buildRIOUnguarded(ctx context.Context, r io.ReaderAt, size int64, f codec.Format, o Options) (*snapshot, error) {
	ro := recordio.Options{Strict: o.Strict, LegacyTransform: o.LegacyTransform}
	sc, err := recordio.NewScanner(r, size, f, ro)
	if err != nil {
		return nil, err
	}
	rt := &rioTable{}
	s := &snapshot{format: f, size: size, tab: rt}
	rt.legacyT = o.LegacyTransform
	rt.transf = sc.Transformers()
	rt.header = append(rt.header, sc.Header()...)
	prog := progress{fn: o.Progress, total: size}
	rel := newBehind(r, 0)
	lastBlock := int64(-1)
	for sc.Next() {
		loc := sc.Item()
		n := rt.ioff.len()
		if loc.Block != lastBlock || loc.Item == 0 {
			rt.blocks = append(rt.blocks, rioBlock{off: loc.Block, first: n})
			lastBlock = loc.Block
			prog.report(loc.Block)
			rel.passed(loc.Block)
			if ctx.Err() != nil {
				break
			}
		}
		if loc.Off > 1<<32-1 {
			return nil, fmt.Errorf("%w: item %d lies %d bytes into its block (limit 4 GiB)", codec.ErrLimit, n, loc.Off)
		}
		rt.ioff.add(uint32(loc.Off))
		if loc.Len < lenInSide {
			rt.ilen.add(uint32(loc.Len))
		} else {
			rt.ilen.add(lenInSide)
			if rt.big == nil {
				rt.big = map[int64]int64{}
			}
			rt.big[n] = loc.Len
		}
		s.bytes += loc.Len
	}
	if err := canceled(ctx); err != nil {
		return nil, err
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	s.n = rt.ioff.len()
	rt.ioff.trim()
	rt.ilen.trim()
	s.damage = append(s.damage, sc.Damage()...)
	if f == codec.RecordIO && sc.HasTrailer() {
		loc, ok, err := sc.Trailer()
		switch {
		case err != nil:
			s.damage = append(s.damage, codec.Damage{Off: max(0, size-rioChunk), Len: min(size, rioChunk),
				Reason: "trailer unreadable: " + err.Error(), Err: codec.ErrCorrupt})
		case ok:
			rt.trailer, rt.hasTrl = loc, true
		}
	}
	prog.report(size)
	s.flavor = rioFlavor(f, rt)
	if sc.HeaderLost() {
		s.flavor += ", header block lost (transformers found from the body blocks)"
	}
	return s, nil
}

// rioChunk is the recordio chunk size, the unit trailer damage is reported in.
const rioChunk = 32768

// rioFlavor names the dialect of a recordio file for people.
func rioFlavor(f codec.Format, rt *rioTable) string {
	if f == codec.RecordIOLegacy {
		if rt.legacyT != "" {
			return "grailbio recordio legacy (" + rt.legacyT + ")"
		}
		return "grailbio recordio legacy"
	}
	var b strings.Builder
	b.WriteString("grailbio recordio")
	if len(rt.transf) > 0 {
		b.WriteString(" (" + strings.Join(rt.transf, ", ") + ")")
	}
	if rt.hasTrl {
		b.WriteString(" with trailer")
	}
	return b.String()
}
