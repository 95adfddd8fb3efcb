package compute

import (
	"reflect"
	"testing"
)

// Clone copies every field, the ones JSON leaves out included, and
// shares no memory with the original: changing the clone's nested
// values leaves the original as it was.
func TestComputeSpecClone(t *testing.T) {
	one, two := 1, 2
	yes := true
	s := &ComputeSpec{Name: "c", Type: ComputeTypeCluster, MinInstances: &one, MaxInstances: &two, Tags: map[string]string{"a": "b"},
		SSHSettings: &SSHSettings{AdminUsername: "u", AdminPassword: "p"}, EnableSSO: &yes, PrepullImages: []string{"x"}, KeepScaleWindows: true}
	// Every field of the struct must survive: a field JSON drops must be
	// copied by hand in Clone. Fill each with a non-zero value.
	v := reflect.ValueOf(s).Elem()
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			fill(t, v.Type().Field(i).Name, v.Field(i))
		}
	}
	c, err := s.Clone()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, c) {
		t.Fatalf("Clone differs:\n got %+v\nwant %+v", c, s)
	}
	*c.MinInstances, c.Tags["a"], c.SSHSettings.AdminPassword, c.PrepullImages[0] = 9, "z", "q", "y"
	if *s.MinInstances != 1 || s.Tags["a"] != "b" || s.SSHSettings.AdminPassword != "p" || s.PrepullImages[0] != "x" {
		t.Errorf("changing the clone changed the original: %+v", s)
	}
}

// fill sets a zero field to a non-zero value of its kind.
func fill(t *testing.T, name string, f reflect.Value) {
	switch f.Kind() {
	case reflect.String:
		f.SetString("v-" + name)
	case reflect.Bool:
		f.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		f.SetInt(3)
	case reflect.Float64:
		f.SetFloat(1.5)
	case reflect.Pointer:
		p := reflect.New(f.Type().Elem())
		if p.Elem().Kind() == reflect.Struct {
			// One field set, so that the struct is not empty.
			for i := 0; i < p.Elem().NumField(); i++ {
				if p.Elem().Field(i).CanSet() && p.Elem().Type().Field(i).Tag.Get("json") != "-" {
					fill(t, name, p.Elem().Field(i))
					break
				}
			}
		} else {
			fill(t, name, p.Elem())
		}
		f.Set(p)
	case reflect.Slice:
		sl := reflect.MakeSlice(f.Type(), 1, 1)
		fill(t, name, sl.Index(0))
		f.Set(sl)
	case reflect.Map:
		m := reflect.MakeMap(f.Type())
		k, e := reflect.New(f.Type().Key()).Elem(), reflect.New(f.Type().Elem()).Elem()
		fill(t, name, k)
		fill(t, name, e)
		m.SetMapIndex(k, e)
		f.Set(m)
	case reflect.Struct:
		for i := 0; i < f.NumField(); i++ {
			if f.Field(i).CanSet() {
				fill(t, name, f.Field(i))
				break
			}
		}
	default:
		t.Fatalf("field %s: kind %s: teach fill", name, f.Kind())
	}
}
