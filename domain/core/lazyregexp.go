package core

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled on its first use rather than at
// package initialisation; its methods are regexp.Regexp's, and it is safe
// for concurrent use. Every process runs the init of every package it
// links: the domain's dozens of validation expressions, compiled by
// regexp.MustCompile in package variables, cost each `shoal` CLI process
// its start-up time, although one command uses a few of them or none.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// LazyRegexp returns expr, to be compiled on first use; a bad expression panics
// there, as regexp.MustCompile does (each package's tests use theirs).
func LazyRegexp(expr string) *Regexp { return &Regexp{expr: expr} }

// Regexp is the compiled expression.
func (r *Regexp) Regexp() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

// String is the expression's source text.
func (r *Regexp) String() string { return r.expr }

// MatchString is regexp.Regexp.MatchString.
func (r *Regexp) MatchString(s string) bool { return r.Regexp().MatchString(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.Regexp().FindStringSubmatch(s) }

// FindAllStringSubmatch is regexp.Regexp.FindAllStringSubmatch.
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.Regexp().FindAllStringSubmatch(s, n)
}

// FindAllStringSubmatchIndex is regexp.Regexp.FindAllStringSubmatchIndex.
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.Regexp().FindAllStringSubmatchIndex(s, n)
}

// ReplaceAllStringFunc is regexp.Regexp.ReplaceAllStringFunc.
func (r *Regexp) ReplaceAllStringFunc(s string, repl func(string) string) string {
	return r.Regexp().ReplaceAllStringFunc(s, repl)
}
