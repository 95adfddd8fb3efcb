package scheduler

import "fmt"

// Nodes of one image. A kubernetes location's node is a pod whose
// container is the job's image, and its agent runs only ranks of that
// image (or of none), so a job may take a node only if the node's image
// is its own, or either of them has none.

// usable reports whether a node of image nodeImage can run a job of
// image jobImage.
func usable(nodeImage, jobImage string) bool {
	return nodeImage == "" || jobImage == "" || nodeImage == jobImage
}

// placeImages is placeCluster for a cluster whose nodes run one image
// each (ClusterState.NodeImages). Strict ordering holds per image: a job that cannot
// start keeps every node it could use from the jobs behind it, so those
// can only take nodes of images it cannot run. A job of another image
// behind it still starts on a free node of its own: otherwise a cluster
// full of idle nodes of one image, at max_instances, would wait forever
// behind a head of another image, its idle nodes kept by the queued
// demand of their own image.
func placeImages(res *Result, c *cluster, jobs []Job, mask uint64, st ClusterState, imageOf map[string]string) {
	taken := make([]bool, len(c.free))
	placed := 0
	// blocked are the jobs that could not start, in queue order.
	var blocked []*Job
	blockedImages := map[string]bool{}
	// claimed reports whether a blocked job ahead could use node i (a
	// blocked job of no image returns before any later job looks).
	claimed := func(i int) bool {
		img := imageOf[c.free[i]]
		return len(blocked) > 0 && (img == "" || blockedImages[img])
	}
	for k, key := range c.jobs {
		j := &jobs[key&mask]
		n := max(j.InstanceCount, 1)
		var mine []int
		other := 0 // free nodes of images j cannot run
		for i := range c.free {
			switch {
			case taken[i] || claimed(i):
			case usable(imageOf[c.free[i]], j.Image):
				if len(mine) < n {
					mine = append(mine, i)
				}
			default:
				other++
			}
		}
		if len(mine) == n {
			ids := make([]string, n)
			for x, i := range mine {
				ids[x], taken[i] = c.free[i], true
			}
			res.Placements = append(res.Placements, Placement{JobID: j.ID, NodeIDs: ids})
			placed += n
			continue
		}
		if st.MaxInstances > 0 && n > st.MaxInstances {
			res.Waiting[j.ID] = tooBig(n, st.MaxInstances)
			continue
		}
		if len(blocked) > 0 && (j.Image == "" || blockedImages[j.Image]) {
			// Behind a job that wants the same nodes.
			res.Waiting[j.ID] = behind(blocked, j)
		} else {
			res.Waiting[j.ID] = imageReason(j, n, len(mine), other, placed, st)
		}
		blocked = append(blocked, j)
		if j.Image == "" {
			// It could use any node: nothing behind it may take one now.
			for _, key := range c.jobs[k+1:] {
				t := &jobs[key&mask]
				if tn := max(t.InstanceCount, 1); st.MaxInstances > 0 && tn > st.MaxInstances {
					res.Waiting[t.ID] = tooBig(tn, st.MaxInstances)
					continue
				}
				res.Waiting[t.ID] = behind(blocked, t)
				blocked = append(blocked, t)
			}
			return
		}
		blockedImages[j.Image] = true
	}
}

// behind is the ReasonBehind of j, waiting behind the blocked jobs ahead
// of it that want its nodes.
func behind(blocked []*Job, j *Job) Reason {
	ahead, next := 0, ""
	for _, b := range blocked {
		if j.Image == "" || b.Image == "" || b.Image == j.Image {
			if next == "" {
				next = b.ID
			}
			ahead++
		}
	}
	if ahead == 0 {
		return NewReason(ReasonBehind, behindPrefix+"0"+behindMany+behindSuffix)
	}
	return WaitingBehind(ahead, next)
}

// imageReason explains why j, the first of its image that cannot start,
// waits: mine of its n nodes are free, other free nodes run other images.
func imageReason(j *Job, n, mine, other, placed int, st ClusterState) Reason {
	// The other images' free nodes count as nodes the cluster has (for
	// whether it can grow), not as nodes this job could start on.
	withOther := st
	withOther.Busy = max(st.Busy, 0) + other
	r := headReason(n, mine, placed, withOther)
	if other == 0 || j.Image == "" {
		return r
	}
	switch r.Code() {
	case ReasonProvisioning, ReasonNoNodes, ReasonGangIncomplete, ReasonAtMax:
		// There are free nodes, just not of its image: say that, or the
		// user sees idle nodes and a job that does not start.
		msg := fmt.Sprintf("waiting for a node of its image %s (%d of %d ready; %d free node(s) run other images)", j.Image, mine, n, other)
		if r.Code() == ReasonAtMax {
			msg += fmt.Sprintf("; the cluster is at max_instances (%d), so it waits for them to go idle and be released", st.MaxInstances)
		} else if st.ProvisioningNote != "" {
			msg += "; " + st.ProvisioningNote
		}
		return NewReason(ReasonImageMismatch, msg)
	}
	return r
}
