import os
# Focused: one question kind, ideal plan tokens, many videos per step. Is the circuit learnable?
import sys, time, math, argparse; sys.path.insert(0,os.path.dirname(os.path.abspath(__file__)))
from common import *
import torch
torch.set_num_threads(1)
from transformers.modeling_outputs import BaseModelOutputWithPooling
from recipes.builtin_model._build import build_model, build_processor, item_texts, train_tokenizer
from recipes.builtin_model import BuiltinArchitecture
from recipes.builtin_model._plan import as_open_item
from recipes.builtin_model._data import (decode_video, segment_indices, frame_size, resize_frames, process_video,
    render_prompt, expand_video_tokens, shared_prefix_logits, per_example_loss, answer_target)
from itemscale.synth import COLOURS
from itemscale.synth._vocab import SHAPES
ap=argparse.ArgumentParser(); ap.add_argument("--steps",type=int,default=600); ap.add_argument("--lr",type=float,default=3e-3)
ap.add_argument("--theta",type=float,default=10000); ap.add_argument("--pos",type=int,default=1); ap.add_argument("--kind",default="distractor")
ap.add_argument("--vps",type=int,default=4); ap.add_argument("--co",type=int,default=0); ap.add_argument("--mode",default="suite"); ap.add_argument("--ramp",type=int,default=400); ap.add_argument("--roles",type=int,default=0); ap.add_argument("--f",type=int,default=8); ap.add_argument("--s",type=int,default=56)
A=ap.parse_args()
import common; common.ROLES[0]=A.roles
items=read_items_jsonl(SUITE/"items.jsonl")
sel=[i for i in items if i.attributes.get("question_kind")==A.kind and i.task_kind==TaskKind.OPEN_QA]
train=[i for i in sel if i.split=="train"]; test=[i for i in sel if i.split=="test"]
torch.manual_seed(0); rng=np.random.default_rng(0)
arch=BuiltinArchitecture(rope_theta=A.theta)
tok=train_tokenizer(list(item_texts([as_open_item(i) for i in items if i.split=="train"]))+["none sign top bottom left middle right"]*5, arch.vocab_size)
p=build_processor(tok); m=build_model(arch,tok); m.train()
words=list(COLOURS)+list(SHAPES)+["sign","none","top","bottom","left","middle","right","stays","lookalike","flashes","turn","appear"]; ids=word_ids(p.tokenizer,words)
params=[q for n,q in m.named_parameters() if not n.startswith("model.visual.")]
opt=torch.optim.AdamW(params,lr=A.lr,betas=(0.9,0.98),weight_decay=0.01)
cache={}
def solo(scene, idx, h, w, pos=0, colour_only=False):
    st=scene.by_role("stay")[0]
    sc=scene.model_copy(update={"actors":(),"events":(st,)})
    return plan_token_words(sc, idx, h, w, pos=pos, colour_only=colour_only)
def prep(it):
    if it.video_path not in cache:
        dv=decode_video(SUITE/it.video_path); idx=segment_indices(dv.num_frames,A.f,None); h,w=frame_size(120,160,A.s); IDX[it.video_path]=idx
        inp=process_video(p,resize_frames(dv.frames[idx],(h,w)),fps=dv.fps,indices=idx)
        cache[it.video_path]=(inp,(solo if A.mode=="solo" else plan_token_words)(SCENES[it.video_id],idx,h,w,pos=A.pos,colour_only=bool(A.co)))
    inp,ws=cache[it.video_path]
    t=teacher_from_words(ws, m.model.language_model.embed_tokens.weight.detach(), ids, ids["none"])
    return inp, BaseModelOutputWithPooling(pooler_output=(t,))
def target(it):
    if A.mode=="caption":
        inp,ws=cache[it.video_path] if it.video_path in cache else (prep(it),cache[it.video_path])[1]
        present=[c for c in COLOURS if any(c in w for w in ws)]
        return ", ".join(present) or "none"
    return answer_target(it)
ROLE={"distractor":"stay","brief_event":"brief","ordering":"turn","counting":"count","small_detail":"sign"}
CUR={"q":1.0}
def curriculum_tokens(it):
    dv_inp=cache[it.video_path][0]
    scene=SCENES[it.video_id]; r=np.random.default_rng(abs(hash((it.item_id,STEP[0])))%2**31)
    keep_e=tuple(e for e in scene.events if e.role==ROLE[A.kind] or r.random()<CUR["q"])
    keep_a=tuple(a for a in scene.actors if r.random()<CUR["q"])
    sc=scene.model_copy(update={"actors":keep_a,"events":keep_e})
    ws=plan_token_words(sc, IDX[it.video_path], *HW, pos=A.pos, colour_only=bool(A.co))
    t=teacher_from_words(ws, m.model.language_model.embed_tokens.weight.detach(), ids, ids["none"])
    return dv_inp, BaseModelOutputWithPooling(pooler_output=(t,))
STEP=[0]; IDX={}; HW=frame_size(120,160,A.s)
def rowloss(it, other=None, cur=False):
    inp,feat=prep(other or it)
    if cur and CUR["q"]<1: inp,feat=curriculum_tokens(it)
    pr=[expand_video_tokens(render_prompt(p,it,with_video=True),inp.num_tokens)]
    lo,lab=shared_prefix_logits(m,p,inp,pr,[target(it)],video_features=feat)
    return per_example_loss(lo,lab)[0]
t0=time.time(); win=[]
for step in range(A.steps):
    fac=min(1,(step+1)/30)*(0.05+0.95*0.5*(1+math.cos(math.pi*step/A.steps)))
    for g in opt.param_groups: g["lr"]=A.lr*fac
    batch=[train[int(k)] for k in rng.integers(len(train),size=A.vps)]
    STEP[0]=step; CUR['q']=min(1.0,max(0.0,(step-150)/A.ramp)) if A.mode=='cur' else 1.0
    loss=torch.stack([rowloss(i,cur=True) for i in batch]).mean()
    opt.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(params,1.0); opt.step(); win.append(float(loss.detach()))
    if (step+1)%100==0:
        m.eval()
        with torch.no_grad():
            r=[float(rowloss(i)) for i in test[:40]]; o=[float(rowloss(i,test[(k+1)%40])) for k,i in enumerate(test[:40])]
        m.train()
        print(step+1, "train", round(np.mean(win),3), "test right", round(np.mean(r),3), "other", round(np.mean(o),3), f"{time.time()-t0:.0f}s", flush=True); win=[]
