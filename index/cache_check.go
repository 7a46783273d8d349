package index

import (
	"context"
	"fmt"
	"io"
)

// A saved table passed its checksum and names the right source, but it is
// still only a claim about the source: checkTable makes sure it describes a
// possible table of a file of its size (every location inside the file,
// records in increasing file order, recordio items packed back to back),
// and verifySource reads the first and the last record through the
// checksum-verifying readers before anything is served from it.

// checkTable checks the structure of a decoded table against its size.
func (s *snapshot) checkTable() error {
	if s.size != s.id.size || s.n < 0 || s.bytes < 0 {
		return errBadCache
	}
	limit := s.size
	if st, ok := s.tab.(interface{ streamSize(int64) int64 }); ok {
		limit = st.streamSize(s.size) // offsets in a decompressed stream
	}
	for _, d := range s.damage {
		if d.Off < 0 || d.Len < 0 || d.Off > limit || d.Len > limit-d.Off {
			return errBadCache
		}
	}
	if err := s.tab.check(s); err != nil {
		return fmt.Errorf("%w: %v", errBadCache, err)
	}
	return nil
}

// verifySource reads a byte of the first and of the last record of s from
// src through the checksum-verifying readers (for recordio, decoding their
// blocks and checking the items' places in them). A record that does not
// read back makes the table a lie.
func (t *Table) verifySource(s *snapshot) error {
	for _, n := range []int64{0, s.n - 1} {
		if n < 0 || n >= s.n || s.size1(n) == 0 {
			continue
		}
		var b [1]byte
		if _, err := t.readSnap(context.Background(), s, n, b[:], 0); err != nil && err != io.EOF {
			return lieOr(err, fmt.Sprintf("record %d does not read back", n))
		}
	}
	return nil
}
