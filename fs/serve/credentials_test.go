package serve

import (
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestMD5Crypt checks md5Crypt against hashes made by `openssl passwd`.
func TestMD5Crypt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ pw, salt, magic, want string }{
		{"correct horse", "rEcFs123", apr1Magic, "$apr1$rEcFs123$UB.RO7TERZjdD98sDoTbz/"},
		{"secret", "abcdefgh", md5Magic, "$1$abcdefgh$cHJi5PXp/ki/ktXzqlk6I1"},
		{"", "x", apr1Magic, "$apr1$x$tMwYqBfQwi3FYAr0aJc8M/"},
	} {
		if got := md5Crypt([]byte(c.pw), []byte(c.salt), c.magic); got != c.want {
			t.Errorf("md5Crypt(%q, %q) = %s, want %s", c.pw, c.salt, got, c.want)
		}
	}
}

func TestHtpasswd(t *testing.T) {
	t.Parallel()
	bc, err := bcrypt.GenerateFromPassword([]byte("b-pass"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	file := "# users\n\n" +
		"apr:$apr1$rEcFs123$UB.RO7TERZjdD98sDoTbz/\n" +
		"md5:$1$abcdefgh$cHJi5PXp/ki/ktXzqlk6I1\n" +
		"sha:{SHA}87u9ZqY9S/F0eUBXjsPQEDUw4h0=\n" +
		"bc:" + strings.Replace(string(bc), "$2a$", "$2y$", 1) + "\n"
	c, err := ParseHtpasswd(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user, pass string
		ok         bool
	}{
		{"apr", "correct horse", true}, {"apr", "correct horsE", false},
		{"md5", "secret", true}, {"md5", "", false},
		{"sha", "hunter2", true}, {"sha", "hunter3", false},
		{"bc", "b-pass", true}, {"bc", "b-pas", false},
		{"nobody", "secret", false}, {"", "", false},
	} {
		for range 2 { // the second check goes through the remembered digest
			if got := c.Check(tc.user, tc.pass); got != tc.ok {
				t.Errorf("Check(%q, %q) = %v, want %v", tc.user, tc.pass, got, tc.ok)
			}
		}
	}
	for _, bad := range []string{"", "# only a comment\n", "plain:text\n", "x\n", ":$apr1$a$b\n", "u:{SHA}!!\n", "u:$2y$zz\n"} {
		if _, err := ParseHtpasswd(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseHtpasswd(%q) accepted it", bad)
		}
	}
}

func TestPlainCredentials(t *testing.T) {
	t.Parallel()
	c, err := NewCredentials("ann", "pw")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Check("ann", "pw") || c.Check("ann", "pW") || c.Check("bob", "pw") {
		t.Fatal("plain credentials check wrongly")
	}
	if !(*Credentials)(nil).Check("anyone", "") {
		t.Fatal("nil credentials refuse")
	}
	for _, bad := range [][2]string{{"", "pw"}, {"a:b", "pw"}, {"ann", ""}} {
		if _, err := NewCredentials(bad[0], bad[1]); err == nil {
			t.Errorf("NewCredentials(%q, %q) accepted", bad[0], bad[1])
		}
	}
}
