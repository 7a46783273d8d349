package tfrecord

import (
	"bufio"
	"bytes"
	"io"

	"github.com/klauspost/compress/flate"
)

// Sparse windows (the idea of rapidgzip's index). A checkpoint's window is
// the 32 KiB of output before it, but the blocks after it usually copy
// from only part of it: the bytes nothing reads can be stored as zeros,
// which deflate to almost nothing. Only the output within 32 KiB (plus a
// longest match) of the checkpoint can copy from the window directly;
// what comes later copies from output after the checkpoint, which the
// window's read bytes make right. Which window bytes are read is found by
// decoding that output three more times with marked windows: byte p of
// the window holding p's low byte, p's high byte, and the complement of
// the low byte. An output byte that comes from the window (directly or
// through copies of copies) then reads p's low byte, its high byte and
// the complement, while a literal reads the same in all three: a byte
// that is its own complement's complement in the first and third decode
// came from window position p.

// reach is how far after a checkpoint output may copy from its window.
const reach = windowSize + 258

// sparser computes sparse windows; it keeps its decoder and buffers.
type sparser struct {
	br    *bufio.Reader
	fr    io.ReadCloser
	marks [3][]byte
	out   [3][]byte
	used  []bool
}

func newSparser() *sparser {
	s := &sparser{br: bufio.NewReaderSize(nil, 4096), fr: flate.NewReader(nil), used: make([]bool, windowSize)}
	for k := range s.marks {
		s.marks[k] = make([]byte, windowSize)
		s.out[k] = make([]byte, reach)
	}
	for p := range windowSize {
		s.marks[0][p] = byte(p)
		s.marks[1][p] = byte(p >> 8)
		s.marks[2][p] = ^byte(p)
	}
	return s
}

// sparse returns window with the bytes the output after the checkpoint
// does not read set to zero, the output being want (up to reach bytes of
// it) as open decodes it with the full window. It returns window itself
// when the sparse one does not decode to want.
func (s *sparser) sparse(open func() io.Reader, window, want []byte) []byte {
	want = want[:min(len(want), reach)]
	n := len(window)
	for k := range s.marks {
		// Window byte p is the p-th of the marks: marks of position
		// n-len(window)+p... aligned so that the window's last byte is
		// mark n-1.
		s.br.Reset(open())
		s.fr.(flate.Resetter).Reset(s.br, s.marks[k][:n])
		if m, _ := io.ReadFull(s.fr, s.out[k][:len(want)]); m != len(want) {
			return window
		}
	}
	clear(s.used[:n])
	for j := range want {
		if a, c := s.out[0][j], s.out[2][j]; a == ^c {
			if p := int(a) | int(s.out[1][j])<<8; p < n {
				s.used[p] = true
			}
		}
	}
	sw := make([]byte, n)
	for p, u := range s.used[:n] {
		if u {
			sw[p] = window[p]
		}
	}
	s.br.Reset(open())
	s.fr.(flate.Resetter).Reset(s.br, sw)
	got := s.out[0][:len(want)]
	if m, _ := io.ReadFull(s.fr, got); m != len(want) || !bytes.Equal(got, want) {
		return window
	}
	return sw
}
