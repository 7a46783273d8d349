package recordio

import (
	"bytes"

	"github.com/recfs/recfs/codec"
)

// Recovery from a damaged v2 header block. The header holds the transformer
// chain, so the body blocks cannot be decoded by the book; but their chunks
// carry their own magic and checksums, and a block's content tells how it
// was stored: an untransformed block parses as an item block, a zstd frame
// starts with zstd's magic, and a flate stream inflates to an item block.

// lostHeaderProbeBlocks bounds how many body blocks are tried when guessing
// the transformer chain of a file whose header block is damaged.
const lostHeaderProbeBlocks = 16

// zstdFrameMagic starts every zstd frame (RFC 8878 section 3.1.1).
var zstdFrameMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// headerLost records the damaged header block (from offset 0 to the first
// valid body or trailer chunk) as damage, guesses the transformer chain
// from the body blocks and positions the scan on the first of them.
func (s *Scanner) headerLost(ce *codec.CorruptError) {
	next := s.resyncV2(chunkSize)
	s.addDamage(codec.Damage{Off: 0, Len: next, Reason: ce.Reason, Err: ce.Err})
	s.lostHeader = true
	s.header, s.xforms, s.chain = nil, nil, nil
	s.pos, s.goodEnd = next, next
	s.guessChain(next)
	if s.size >= 2*chunkSize {
		if h, _, f := s.cr.chunk(s.size - chunkSize); f == nil && h.magic == trailerMagic {
			s.lostTrailer = true
		}
	}
}

// guessChain sets the scanner's transformer chain from the first body block
// at or after from (of at most lostHeaderProbeBlocks) that decodes to a
// valid item block under one of the candidates: no transformer (checked as
// the chunks stream by, as an untransformed scan does, so a large block is
// never held whole), then zstd (only if the stored bytes start with its
// frame magic) and flate, each decoded as a stream (nothing decoded is kept) within the decoded-block cap.
// If no block decodes, the chain stays empty and the blocks are reported as
// damage by the scan.
func (s *Scanner) guessChain(from int64) {
	pos := from
	for tries := 0; tries < lostHeaderProbeBlocks; tries++ {
		pos = s.resyncV2(pos)
		if pos+chunkSize > s.size {
			return
		}
		s.chain = nil
		if b, _, f := s.decodeBodyBlock(pos); f == nil && b.Chunks > 0 {
			return // untransformed
		}
		stored, chunks, f := readWholeBlock(&s.cr, pos, isBodyMagic, s.opts.maxBlock(), &s.stored)
		if f != nil || chunks == 0 {
			pos += chunkSize
			continue
		}
		for _, name := range chainCandidates(stored) {
			chain := []transformer{{spec: name, name: name, level: -1}}
			// Decoded as a stream and discarded: only whether it parses
			// as a whole item block matters.
			if _, _, err := s.peek.header(chain, bytes.NewReader(stored), s.opts.maxBlock(), s.opts.streamWindow(), true); err != nil {
				continue
			}
			s.chain, s.xforms = chain, []string{name}
			return
		}
		pos += int64(chunks) * chunkSize
	}
}

// chainCandidates lists the transformers to try on a stored block that
// is not an untransformed item block.
func chainCandidates(stored []byte) []string {
	if bytes.HasPrefix(stored, zstdFrameMagic) {
		return []string{"zstd", "flate"}
	}
	return []string{"flate"}
}
