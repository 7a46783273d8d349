package tfrecord

// adler32Update extends the Adler-32 checksum sum (1 for no bytes) with p,
// as ZLIB's trailer computes it. (hash/adler32 cannot resume from a sum.)
func adler32Update(sum uint32, p []byte) uint32 {
	const (
		mod  = 65521
		nmax = 5552 // the most bytes before s2 could overflow 32 bits
	)
	s1, s2 := sum&0xffff, sum>>16
	for len(p) > 0 {
		q := p[:min(len(p), nmax)]
		p = p[len(q):]
		for _, b := range q {
			s1 += uint32(b)
			s2 += s1
		}
		s1 %= mod
		s2 %= mod
	}
	return s2<<16 | s1
}
