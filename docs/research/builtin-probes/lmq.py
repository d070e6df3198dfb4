import os
import sys, time, math, collections, argparse; sys.path.insert(0,os.path.dirname(os.path.abspath(__file__)))
from common import SUITE, SCENES, mcqa_accuracy
from plan import *
import numpy as np, torch
torch.set_num_threads(1)
from transformers.modeling_outputs import BaseModelOutputWithPooling
from itemscale.items import read_items_jsonl, Item
from itemscale.responses import TaskKind
from recipes.builtin_model._build import build_model, build_processor, item_texts, train_tokenizer
from recipes.builtin_model import BuiltinArchitecture
from recipes.builtin_model._plan import as_open_item, group_by_video
from recipes.builtin_model._data import (decode_video, segment_indices, frame_size, resize_frames, process_video,
    render_prompt, expand_video_tokens, shared_prefix_logits, per_example_loss, answer_target, encode_batch)
ap=argparse.ArgumentParser(); ap.add_argument("--steps",type=int,default=1000); ap.add_argument("--lr",type=float,default=2e-3)
ap.add_argument("--hold",type=int,default=150); ap.add_argument("--ramp",type=int,default=500); ap.add_argument("--eval_every",type=int,default=250)
ap.add_argument("--sequential",type=int,default=0); ap.add_argument("--three",type=int,default=0); ap.add_argument("--perkind",type=int,default=0); ap.add_argument("--frames",default="8,16,32"); ap.add_argument("--sides",default="56"); ap.add_argument("--theta",type=float,default=10000)
A=ap.parse_args()
import plan; plan.THREE[0]=A.three
items=read_items_jsonl(SUITE/"items.jsonl")
train=[as_open_item(i) for i in items if i.split=="train"]; test=[i for i in items if i.split=="test"]
torch.manual_seed(0); rng=np.random.default_rng(0)
arch=BuiltinArchitecture(rope_theta=A.theta)
tok=train_tokenizer(list(item_texts(train))+["none"]*5, arch.vocab_size); p=build_processor(tok); m=build_model(arch,tok); m.train()
W=WordTable(p.tokenizer)
params=[q for n,q in m.named_parameters() if not n.startswith("model.visual.")]
opt=torch.optim.AdamW(params,lr=A.lr,betas=(0.9,0.98),weight_decay=0.01)
groups=group_by_video(train); vids=sorted(groups)
FR=[int(x) for x in A.frames.split(",")]; SD=[int(x) for x in A.sides.split(",")]
dcache={}
def dec(path):
    if path not in dcache: dcache[path]=decode_video(SUITE/path)
    return dcache[path]
def video_inputs(path,f,s,jitter=None):
    dv=dec(path); idx=segment_indices(dv.num_frames,f,jitter); h,w=frame_size(120,160,s)
    return process_video(p,resize_frames(dv.frames[idx],(h,w)),fps=dv.fps,indices=idx), idx, h, w
def feats(vid, idx, h, w, keep=lambda r,k: True):
    t=W.vectors(plan_words(SCENES[vid],idx,h,w,keep), m.model.language_model.embed_tokens.weight.detach())
    return BaseModelOutputWithPooling(pooler_output=(t,))
tv=sorted({i.video_id for i in test})[:30]
def video_features(v, path, f, s):
    inp,idx,h,w=video_inputs(path,f,s)
    return inp, feats(v,idx,h,w)
def evaluate(budgets):
    return mcqa_accuracy(m, p, test, tv, budgets, video_features)
t0=time.time(); win=[]; kwin=collections.defaultdict(list)
for step in range(A.steps):
    fac=min(1,(step+1)/60)*(0.05+0.95*0.5*(1+math.cos(math.pi*step/A.steps)))
    for g in opt.param_groups: g["lr"]=A.lr*fac
    q=min(1.0,max(0.0,(step-A.hold)/A.ramp)) if not A.sequential else min(1.0,max(0.0,((step%A.sequential)-A.hold)/A.ramp)) if step<5*A.sequential else 1.0
    f=FR[int(rng.integers(len(FR)))]; s=SD[int(rng.integers(len(SD)))]
    losses=[]
    if A.perkind:
        kind=["distractor","brief_event","small_detail","ordering","counting"][step%5]
        for _ in range(A.perkind):
            v=vids[int(rng.integers(len(vids)))]
            rows=[i for i in groups[v] if i.attributes["question_kind"]==kind]
            it=rows[int(rng.integers(len(rows)))]
            inp,idx,h,w=video_inputs(it.video_path,f,s,None)
            roles=KIND_ROLES[kind]; drop=rng.random(64)
            keep=lambda role,k,roles=roles,drop=drop: (role in roles) or drop[k if role is None else 8+k]<q
            pr=[expand_video_tokens(render_prompt(p,it,with_video=True),inp.num_tokens)]
            lo,lab=shared_prefix_logits(m,p,inp,pr,[answer_target(it)],video_features=feats(v,idx,h,w,keep))
            losses.append(per_example_loss(lo,lab)[0]); kwin[kind].append(float(losses[-1].detach()))
        its=[]
    else:
        v=vids[int(rng.integers(len(vids)))]; its=groups[v]
        jr=np.random.default_rng(int(rng.integers(2**31)))
        inp,idx,h,w=video_inputs(its[0].video_path,f,s,jr if jr.random()<0.5 else None)
    ORDER=["distractor","brief_event","small_detail","ordering","counting","summary"]
    if A.perkind:
        its_step=[]
    elif A.sequential:
        n_in=1+step//A.sequential
        its_step=[i for i in its if i.attributes["question_kind"] in ORDER[:n_in]]
    else:
        its_step=its
    for it in its_step:
        roles=KIND_ROLES[it.attributes["question_kind"]]
        drop=rng.random(64)
        keep=lambda role,k,roles=roles,drop=drop: (role in roles) or drop[k if role is None else 8+k]<q
        pr=[expand_video_tokens(render_prompt(p,it,with_video=True),inp.num_tokens)]
        lo,lab=shared_prefix_logits(m,p,inp,pr,[answer_target(it)],video_features=feats(v,idx,h,w,keep))
        losses.append(per_example_loss(lo,lab)[0]); kwin[it.attributes['question_kind']+('/'+it.task_kind.value[:4])].append(float(losses[-1].detach()))
    loss=torch.stack(losses).mean()
    opt.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(params,1.0); opt.step()
    win.append(float(loss.detach()))
    if (step+1)%50==0: print(f"step {step+1} q {q:.2f} loss {np.mean(win):.3f} {time.time()-t0:.0f}s", {k:round(float(np.mean(v)),2) for k,v in sorted(kwin.items())},flush=True); win=[]; kwin.clear()
    if (step+1)%A.eval_every==0 or step+1==A.steps:
        print("EVAL",step+1,evaluate([(0,0),(8,56),(16,56),(32,56)]),flush=True)
