import os
import json, numpy as np, torch
from pathlib import Path
from itemscale.items import read_items_jsonl, Item
from itemscale.responses import TaskKind
from itemscale.synth._scene import VideoScene
SUITE=Path(os.environ.get("ITEMSCALE_PROBE_SUITE", "/tmp/h5/suite"))
SCENES={v["video_id"]:VideoScene(**v["scene"]) for v in json.load(open(SUITE/"suite.json"))["videos"]}

ROLEWORD={"stay":"stays","lookalike":"lookalike","brief":"flashes","turn":"turn","count":"appear"}
ROLES=[0]
def objects_at(scene, frame):
    out=[]
    for a in scene.actors:
        out.append(((a.colour,a.shape), a.bbox(frame, scene.width, scene.height)))
    for e in scene.events:
        if e.visible(frame):
            if e.role=="sign": out.append((("sign",), e.bbox))
            elif ROLES[0]: out.append(((e.colour,e.shape,ROLEWORD[e.role]), e.bbox))
            else: out.append(((e.colour,e.shape), e.bbox))
    return out

def token_words(scene, indices, h, w, objects_at_frame, region=28, min_frac=0.15, pick=None, extra=None):
    """Per merged visual token (two frames x region x region pixels at the served size h x w),
    the words of every object whose box covers at least `min_frac` of its own area inside the
    region; `pick` chooses which of an object's words count, `extra(r, c)` adds words."""
    idx=list(int(i) for i in indices)
    if len(idx)%2: idx.append(idx[-1])
    sx=w/scene.width; sy=h/scene.height
    rows,cols=h//region,w//region
    words=[]
    for g in range(len(idx)//2):
        objs=objects_at_frame(idx[2*g])+objects_at_frame(idx[2*g+1])
        for r in range(rows):
            for c in range(cols):
                rx0,ry0=c*region,r*region; ws=[]
                for names,(x0,y0,x1,y1) in objs:
                    X0,Y0,X1,Y1=x0*sx,y0*sy,x1*sx,y1*sy
                    ov=max(0,min(X1,rx0+region)-max(X0,rx0))*max(0,min(Y1,ry0+region)-max(Y0,ry0))
                    area=(X1-X0)*(Y1-Y0)
                    if ov>=min_frac*area and ov>=4:
                        for n in (pick(names) if pick else names):
                            if n not in ws: ws.append(n)
                if extra:
                    ws=ws+extra(r,c)
                words.append(ws)
    return words

def plan_token_words(scene, indices, h, w, region=28, min_frac=0.15, pos=0, colour_only=False):
    def position_words(r, c):
        cy=(r+0.5)*region/h; cx=(c+0.5)*region/w
        return [("top","bottom")[int(cy*2)], ("left","middle","right")[int(cx*3)]]
    return token_words(scene, indices, h, w, lambda f: objects_at(scene, f), region, min_frac,
                       pick=(lambda names: names[:1]) if colour_only else None,
                       extra=position_words if pos else None)

def word_ids(tokenizer, words):
    out={}
    for w in words:
        a=tokenizer(" "+w,add_special_tokens=False)["input_ids"]; b=tokenizer(w,add_special_tokens=False)["input_ids"]
        out[w]=int(b[0]) if len(b)==1 or len(a)>1 else int(a[0])
    return out

def teacher_from_words(words_per_token, table, ids, none_id):
    rows=[]
    for ws in words_per_token:
        if ws: rows.append(table[[ids[w] for w in ws]].mean(0))
        else: rows.append(table[none_id])
    return torch.stack(rows)

KINDS=["brief_event","small_detail","counting","ordering","distractor"]

def mcqa_accuracy(m, p, test, video_ids, budgets, features_for):
    """MCQA by option likelihood (each option's text scored as the open answer), per budget
    (frames, short side; 0 frames = text-only): (mean, [per kind in KINDS]).
    `features_for(video_id, video_path, frames, short_side)` -> (video inputs, visual tokens)."""
    import collections
    from recipes.builtin_model._data import (render_prompt, expand_video_tokens,
        shared_prefix_logits, encode_batch)
    m.eval(); out={}
    for (f,s) in budgets:
        res=collections.defaultdict(list)
        for v in video_ids:
            its=[i for i in test if i.video_id==v and i.task_kind==TaskKind.MCQA]
            rows=[];tg=[]
            for i in its:
                oq=Item(item_id=i.item_id,video_id=v,task_kind=TaskKind.OPEN_QA,question=i.question,references=("x",))
                for o in i.options: rows.append(oq); tg.append(o)
            with torch.no_grad():
                if f==0:
                    b=encode_batch(p,[render_prompt(p,r,with_video=False) for r in rows],tg)
                    lo=m(input_ids=b.input_ids,attention_mask=b.attention_mask).logits; lab=b.labels
                else:
                    inp,feat=features_for(v,its[0].video_path,f,s)
                    pr=[expand_video_tokens(render_prompt(p,r,with_video=True),inp.num_tokens) for r in rows]
                    lo,lab=shared_prefix_logits(m,p,inp,pr,tg,video_features=feat)
                sh=lo[:,:-1].float().log_softmax(-1); l=lab[:,1:]
                tk=torch.where(l==-100,0,l); lp=(sh.gather(-1,tk[...,None])[...,0]*(l!=-100)).sum(1)
            for j,i in enumerate(its):
                res[i.attributes["question_kind"]].append(int(lp[4*j:4*j+4].argmax())=="ABCD".index(i.answer))
        out[f"{f}@{s}"]=(round(float(np.mean([x for k in KINDS for x in res[k]])),3), [round(float(np.mean(res[k])),2) for k in KINDS])
    m.train(); return out
