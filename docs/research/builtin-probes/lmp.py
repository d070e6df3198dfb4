import os
# LM-only probe: plan-derived teacher tokens (colour+shape words) as visual tokens.
import sys, time, math, collections; sys.path.insert(0,os.path.dirname(os.path.abspath(__file__)))
from common import *
import torch
torch.set_num_threads(1)
from transformers.modeling_outputs import BaseModelOutputWithPooling
from recipes.builtin_model._build import build_model, build_processor, item_texts, train_tokenizer
from recipes.builtin_model import BuiltinArchitecture
from recipes.builtin_model._plan import as_open_item, group_by_video
from recipes.builtin_model._data import (decode_video, segment_indices, frame_size, resize_frames, process_video,
    render_prompt, expand_video_tokens, shared_prefix_logits, per_example_loss, answer_target, encode_batch)
from itemscale.synth import COLOURS
from itemscale.synth._vocab import SHAPES, SIGN_WORDS
import argparse
ap=argparse.ArgumentParser(); ap.add_argument("--steps",type=int,default=1500); ap.add_argument("--lr",type=float,default=1.5e-3)
ap.add_argument("--theta",type=float,default=4.0); ap.add_argument("--eval_every",type=int,default=300)
ap.add_argument("--frames",default="8,16,32"); ap.add_argument("--sides",default="56,112"); ap.add_argument("--seed",type=int,default=0)
ap.add_argument("--layers",type=int,default=4); ap.add_argument("--pos",type=int,default=0)
A=ap.parse_args()
items=read_items_jsonl(SUITE/"items.jsonl")
train=[as_open_item(i) for i in items if i.split=="train"]; test=[i for i in items if i.split=="test"]
torch.manual_seed(A.seed); rng=np.random.default_rng(A.seed)
arch=BuiltinArchitecture(rope_theta=A.theta, text_layers=A.layers)
tok=train_tokenizer(list(item_texts(train))+["none sign top bottom left middle right"]*5, arch.vocab_size); p=build_processor(tok); m=build_model(arch,tok); m.train()
words=list(COLOURS)+list(SHAPES)+["sign","none","top","bottom","left","middle","right"]
ids=word_ids(p.tokenizer, words)
params=[q for n,q in m.named_parameters() if not n.startswith("model.visual.")]
opt=torch.optim.AdamW(params,lr=A.lr,betas=(0.9,0.98),weight_decay=0.01)
groups=group_by_video(train); vids=sorted(groups)
FR=[int(x) for x in A.frames.split(",")]; SD=[int(x) for x in A.sides.split(",")]
cache={}
def dec(path):
    if path not in cache: cache[path]=decode_video(SUITE/path)
    return cache[path]
def prep(vid, path, f, s, jitter=None):
    dv=dec(path); idx=segment_indices(dv.num_frames,f,jitter)
    h,w=frame_size(120,160,s); fr=resize_frames(dv.frames[idx],(h,w))
    inp=process_video(p,fr,fps=dv.fps,indices=idx)
    table=m.model.language_model.embed_tokens.weight
    t=teacher_from_words(plan_token_words(SCENES[vid],idx,h,w,pos=A.pos), table.detach(), ids, ids["none"])
    assert t.shape[0]==inp.num_tokens,(t.shape,inp.num_tokens)
    return inp, BaseModelOutputWithPooling(pooler_output=(t,))
tv=sorted({i.video_id for i in test})[:30]
def evaluate(budgets):
    return mcqa_accuracy(m, p, test, tv, budgets, prep)
t0=time.time(); win=[]
for step in range(A.steps):
    fac=(step+1)/60 if step<60 else 0.05+0.95*0.5*(1+math.cos(math.pi*(step-60)/(A.steps-60)))
    for g in opt.param_groups: g["lr"]=A.lr*fac
    v=vids[int(rng.integers(len(vids)))]; its=groups[v]
    f=FR[int(rng.integers(len(FR)))]; s=SD[int(rng.integers(len(SD)))]
    jr=np.random.default_rng(int(rng.integers(2**31)))
    inp,feat=prep(v,its[0].video_path,f,s,jr if jr.random()<0.5 else None)
    pr=[expand_video_tokens(render_prompt(p,i,with_video=True),inp.num_tokens) for i in its]
    lo,lab=shared_prefix_logits(m,p,inp,pr,[answer_target(i) for i in its],video_features=feat)
    loss=per_example_loss(lo,lab).mean()
    opt.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(params,1.0); opt.step()
    win.append(float(loss))
    if (step+1)%50==0: print(f"step {step+1} loss {np.mean(win):.3f} {time.time()-t0:.0f}s",flush=True); win=[]
    if (step+1)%A.eval_every==0 or step+1==A.steps:
        print("EVAL",step+1,evaluate([(0,0),(8,56),(16,56),(32,56),(32,112)]),flush=True)
