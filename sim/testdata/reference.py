"""An independent replay of the golden scenario, written straight from the
flowchart without Shoal's scheduler or autoscaler: at each event time, jobs
end and nodes become ready (idle from then), jobs arrive, queued jobs take
the node idle longest, a node is provisioned while queued jobs outnumber
nodes being provisioned, and idle nodes whose timer expired go when nothing
is queued. sim/reference_test.go compares its totals with the Go replay."""
import csv, sys
rows=[]
for r in csv.DictReader(open(sys.argv[1])):
    if r['num_gpu']!='1' or r['scheduled_time']=='' or r['deletion_time']=='': continue
    rows.append((int(r['creation_time']), int(r['deletion_time'])-int(r['scheduled_time']), r['name']))
rows.sort(key=lambda x:x[0])  # stable
D=180
def run(T):
    nodes={}  # id -> dict(created, ready_at, ready, idle_since, end)
    queue=[]; nxt=0; t=0; seq=0; nh=0.0; waits=[0]*len(rows); done=0
    while done<len(rows) or nodes:
        for n in nodes.values():
            if n['end'] is not None and n['end']<=t:
                n['idle_since']=n['end']; n['end']=None; done+=1
            if not n['ready'] and n['ready_at']<=t:
                n['ready']=True; n['idle_since']=n['ready_at']
        while nxt<len(rows) and rows[nxt][0]<=t:
            queue.append(nxt); nxt+=1
        idle=sorted([k for k,n in nodes.items() if n['ready'] and n['end'] is None], key=lambda k:(nodes[k]['idle_since'],k))
        while queue and idle:
            j=queue.pop(0); k=idle.pop(0)
            nodes[k]['end']=t+rows[j][1]; waits[j]=t-rows[j][0]
            if rows[j][1]==0:
                nodes[k]['end']=None; nodes[k]['idle_since']=t; done+=1
        prep=sum(1 for n in nodes.values() if not n['ready'])
        while len(queue)>prep:
            seq+=1; nodes['n%08d'%seq]=dict(created=t,ready_at=t+D,ready=False,idle_since=None,end=None); prep+=1
        if not queue:
            for k in [k for k,n in nodes.items() if n['ready'] and n['end'] is None and n['idle_since']+T<=t]:
                nh+=t-nodes[k]['created']; del nodes[k]
        cands=[]
        if nxt<len(rows): cands.append(rows[nxt][0])
        for n in nodes.values():
            if not n['ready']: cands.append(n['ready_at'])
            elif n['end'] is not None: cands.append(n['end'])
            else: cands.append(n['idle_since']+T)
        cands=[c for c in cands if c>t]
        if not cands: break
        t=min(cands)
    return nh/3600, sum(1 for w in waits if w>0), sum(waits)/len(waits)
for T in (0,120,600,1800):
    print(T, "%.6f %d %.3f"%run(T))
