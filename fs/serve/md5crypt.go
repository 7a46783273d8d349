package serve

import "crypto/md5"

// The MD5-based crypt of FreeBSD ($1$) and its Apache variant ($apr1$),
// which differ only in their magic prefix: htpasswd's default hash.
const (
	apr1Magic = "$apr1$"
	md5Magic  = "$1$"
	cryptB64  = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// md5Crypt returns the full hash string (magic, salt, "$", 22 characters)
// of pw with salt (at most 8 bytes are used).
func md5Crypt(pw, salt []byte, magic string) string {
	if len(salt) > 8 {
		salt = salt[:8]
	}
	alt := md5.New()
	alt.Write(pw)
	alt.Write(salt)
	alt.Write(pw)
	altSum := alt.Sum(nil)

	h := md5.New()
	h.Write(pw)
	h.Write([]byte(magic))
	h.Write(salt)
	for n := len(pw); n > 0; n -= md5.Size {
		h.Write(altSum[:min(n, md5.Size)])
	}
	for n := len(pw); n > 0; n >>= 1 {
		if n&1 == 1 {
			h.Write([]byte{0})
		} else {
			h.Write(pw[:1])
		}
	}
	sum := h.Sum(nil)
	for round := 0; round < 1000; round++ {
		r := md5.New()
		if round&1 == 1 {
			r.Write(pw)
		} else {
			r.Write(sum)
		}
		if round%3 != 0 {
			r.Write(salt)
		}
		if round%7 != 0 {
			r.Write(pw)
		}
		if round&1 == 1 {
			r.Write(sum)
		} else {
			r.Write(pw)
		}
		sum = r.Sum(sum[:0])
	}
	out := make([]byte, 0, len(magic)+len(salt)+1+22)
	out = append(out, magic...)
	out = append(out, salt...)
	out = append(out, '$')
	for _, g := range [][3]int{{0, 6, 12}, {1, 7, 13}, {2, 8, 14}, {3, 9, 15}, {4, 10, 5}} {
		v := uint32(sum[g[0]])<<16 | uint32(sum[g[1]])<<8 | uint32(sum[g[2]])
		out = appendB64(out, v, 4)
	}
	return string(appendB64(out, uint32(sum[11]), 2))
}

// appendB64 appends the n low 6-bit groups of v, least significant first.
func appendB64(out []byte, v uint32, n int) []byte {
	for ; n > 0; n-- {
		out = append(out, cryptB64[v&0x3f])
		v >>= 6
	}
	return out
}
