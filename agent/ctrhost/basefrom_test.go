package ctrhost

import (
	"reflect"
	"testing"
)

func TestBaseImages(t *testing.T) {
	for _, c := range []struct {
		name, dockerfile string
		want             []string
	}{
		{"one", "FROM reg.example/private/base:1\nRUN echo hi\n", []string{"reg.example/private/base:1"}},
		{"stages and scratch", "FROM --platform=linux/amd64 reg/a:1 AS build\nRUN make\nFROM scratch\nCOPY --from=build /x /x\nCOPY --from=0 /y /y\nFROM build\n", []string{"reg/a:1"}},
		{"copy from an image", "FROM reg/a:1\nCOPY --from=reg/tools:2 /bin/t /bin/t\nRUN --mount=type=bind,from=reg/cache:3,target=/c true\n", []string{"reg/a:1", "reg/tools:2", "reg/cache:3"}},
		{"global args", "ARG REG=reg.example\nARG TAG=\"7\"\n# a comment\nFROM ${REG}/base:$TAG\nARG LATE=x\nFROM $LATE/y\n", []string{"reg.example/base:7", "/y"}},
		{"defaults", "ARG EMPTY\nFROM ${NONE:-reg/private:1}\nFROM ${EMPTY:+reg/x:1}reg/b:2\n", []string{"reg/private:1", "reg/b:2"}},
		{"continued lines", "FROM \\\n  reg/a:1 \\\n  AS a\nFROM a\n", []string{"reg/a:1"}},
		{"twice", "FROM reg/a:1\nFROM reg/a:1\n", []string{"reg/a:1"}},
		{"lowercase", "from reg/a:1 as A\nfrom a\n", []string{"reg/a:1"}},
	} {
		if got := BaseImages([]byte(c.dockerfile)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q; want %q", c.name, got, c.want)
		}
	}
}

func FuzzBaseImages(f *testing.F) {
	f.Add([]byte("ARG A=${B\nFROM $A AS x\nCOPY --from= /a /b\nRUN --mount=from=,x\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _ = BaseImages(b) })
}
