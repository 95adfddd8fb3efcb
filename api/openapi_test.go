package api_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/api/openapi"
)

// The OpenAPI document at /api/v1/openapi.json and the route table agree:
// every /api/v1 route is documented with a summary (a new route without
// documentation fails here), every documented route exists, and every
// schema reference resolves.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	e := newTestEnv(t)
	resp, err := http.Get(e.ts.URL + "/api/v1/openapi.json")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET openapi.json: %v %v", resp, err)
	}
	var doc struct {
		OpenAPI    string                               `json:"openapi"`
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	raw := new(strings.Builder)
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	inDoc := map[string]bool{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			inDoc[strings.ToUpper(method)+" "+path] = true
			if s, _ := op["summary"].(string); s == "" {
				t.Errorf("%s %s has no summary: document it in apiDocs (api/openapi/openapi.go)", strings.ToUpper(method), path)
			}
		}
	}
	inRoutes := map[string]bool{}
	reads := handlerQueryParams(t)
	for _, r := range e.srv.Routes() {
		method, path, _ := strings.Cut(r.Pattern, " ")
		if !strings.HasPrefix(path, "/api/v1/") {
			continue
		}
		path = strings.ReplaceAll(path, "...}", "}")
		inRoutes[method+" "+path] = true
		// The query parameters documented are those the handler reads.
		var documented []string
		if op := doc.Paths[path][strings.ToLower(method)]; op != nil {
			params, _ := op["parameters"].([]any)
			for _, p := range params {
				if p, _ := p.(map[string]any); p["in"] == "query" {
					documented = append(documented, p["name"].(string))
				}
			}
		}
		read, ok := reads[r.HandlerName()]
		if !ok {
			t.Errorf("%s: handler %q not found in api/**/*.go", r.Pattern, r.HandlerName())
		}
		sort.Strings(documented)
		if !slices.Equal(documented, read) {
			t.Errorf("%s: the document lists query parameters %q; its handler %s reads %q", r.Pattern, documented, r.HandlerName(), read)
		}
	}
	for k := range inRoutes {
		if !inDoc[k] {
			t.Errorf("route %s is not in the OpenAPI document", k)
		}
	}
	for _, k := range openapi.DocumentedRoutes() {
		if !inRoutes[k] {
			t.Errorf("the OpenAPI document describes %s, which is no route", k)
		}
	}
	// References resolve.
	b, _ := json.Marshal(doc)
	raw.Write(b)
	var refs []string
	for _, part := range strings.Split(raw.String(), `"$ref":"#/components/schemas/`)[1:] {
		refs = append(refs, part[:strings.Index(part, `"`)])
	}
	sort.Strings(refs)
	for _, r := range refs {
		if _, ok := doc.Components.Schemas[r]; !ok {
			t.Errorf("reference to missing schema %s", r)
		}
	}
	if len(inRoutes) < 60 || len(doc.Components.Schemas) < 20 {
		t.Errorf("%d routes, %d schemas: the document looks empty", len(inRoutes), len(doc.Components.Schemas))
	}
}

// handlerQueryParams reads the non-test Go files of api and its
// sub-packages and returns, for each method (by its qualified name,
// Route.HandlerName), the query parameters it reads (sorted): the literal
// names in r.URL.Query().Get/Has (directly or through a variable holding
// the query) and r.FormValue, in the method and in its package's
// functions and its receiver's methods it calls.
func handlerQueryParams(t *testing.T) map[string][]string {
	t.Helper()
	const module = "github.com/shoal-ml/shoal/api"
	fset := token.NewFileSet()
	funcs := map[string]*ast.FuncDecl{} // "<pkg>.(*Type).name" or "<pkg>.name"
	recvOf := map[string]string{}       // a method's receiver variable and "<pkg>.(*Type)."
	pkgOf := map[string]string{}        // a function's package
	err := filepath.WalkDir(".", func(f string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return err
		}
		if !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") {
			return nil
		}
		pkg := module
		if dir := filepath.ToSlash(filepath.Dir(f)); dir != "." {
			pkg += "/" + dir
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			return err
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			key := pkg + "." + fd.Name.Name
			if fd.Recv != nil {
				// pointer receivers (*Server) and the generic handler
				// sets' value receivers (assetHandlers[T])
				recv, ptr := fd.Recv.List[0].Type, false
				if star, ok := recv.(*ast.StarExpr); ok {
					recv, ptr = star.X, true
				}
				if ix, ok := recv.(*ast.IndexExpr); ok {
					recv = ix.X
				}
				id, ok := recv.(*ast.Ident)
				if !ok || len(fd.Recv.List[0].Names) == 0 {
					continue
				}
				prefix := pkg + "." + id.Name + "."
				if ptr {
					prefix = pkg + ".(*" + id.Name + ")."
				}
				key = prefix + fd.Name.Name
				recvOf[key] = fd.Recv.List[0].Names[0].Name + " " + prefix
			}
			funcs[key], pkgOf[key] = fd, pkg
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	isQuery := func(e ast.Expr) bool { // r.URL.Query()
		c, ok := e.(*ast.CallExpr)
		if !ok {
			return false
		}
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Query" {
			return false
		}
		inner, ok := sel.X.(*ast.SelectorExpr)
		return ok && inner.Sel.Name == "URL"
	}
	var reads func(key string, seen map[string]bool, into map[string]bool)
	reads = func(key string, seen map[string]bool, into map[string]bool) {
		fd := funcs[key]
		if fd == nil || seen[key] {
			return
		}
		seen[key] = true
		pkg := pkgOf[key]
		recv, prefix, _ := strings.Cut(recvOf[key], " ")
		queryVars := map[string]bool{}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for i, rhs := range n.Rhs {
					if id, ok := n.Lhs[i].(*ast.Ident); ok && isQuery(rhs) {
						queryVars[id.Name] = true
					}
				}
			case *ast.CallExpr:
				switch fun := n.Fun.(type) {
				case *ast.Ident:
					reads(pkg+"."+fun.Name, seen, into)
				case *ast.SelectorExpr:
					if id, ok := fun.X.(*ast.Ident); ok && recv != "" && id.Name == recv {
						reads(prefix+fun.Sel.Name, seen, into)
					}
					param := ""
					if len(n.Args) > 0 {
						if lit, ok := n.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							param, _ = strconv.Unquote(lit.Value)
						}
					}
					if param == "" {
						break
					}
					id, isVar := fun.X.(*ast.Ident)
					switch {
					case (fun.Sel.Name == "Get" || fun.Sel.Name == "Has") && (isQuery(fun.X) || isVar && queryVars[id.Name]):
						into[param] = true
					case fun.Sel.Name == "FormValue":
						into[param] = true
					}
				}
			}
			return true
		})
	}
	out := map[string][]string{}
	for key := range funcs {
		name := key
		into := map[string]bool{}
		reads(key, map[string]bool{}, into)
		params := []string{}
		for p := range into {
			params = append(params, p)
		}
		sort.Strings(params)
		out[name] = params
	}
	if got := out[module+".(*Server).handleListJobs"]; !slices.Contains(got, "limit") {
		t.Fatalf("the reader of handlers finds %q in handleListJobs, which reads limit: it is broken", got)
	}
	return out
}
