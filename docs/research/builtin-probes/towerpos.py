import os
# Can the Qwen2.5-VL tower learn each merged token's absolute cell (2x3 grid) from suite frames?
import sys, time, math; sys.path.insert(0,os.path.dirname(os.path.abspath(__file__)))
from common import *
import torch
torch.set_num_threads(1)
from recipes.builtin_model._build import build_model, build_processor, item_texts, train_tokenizer
from recipes.builtin_model import BuiltinArchitecture
from recipes.builtin_model._data import decode_video, segment_indices, frame_size, resize_frames, process_video
items=read_items_jsonl(SUITE/"items.jsonl")
train=[i for i in items if i.split=="train"]
torch.manual_seed(0); rng=np.random.default_rng(0)
arch=BuiltinArchitecture()
tok=train_tokenizer(list(item_texts(train))[:2000], arch.vocab_size); p=build_processor(tok); m=build_model(arch,tok)
head=torch.nn.Linear(arch.text_hidden,6)
params=list(m.model.visual.parameters())+list(head.parameters())
opt=torch.optim.AdamW(params,lr=1.5e-3)
paths=sorted({i.video_path for i in train})
def cells(n,h,w):
    rows,cols=h//28,w//28; out=[]
    for g in range(n):
        for r in range(rows):
            for c in range(cols):
                out.append(int(((r+0.5)*28/h)*2)*3+int(((c+0.5)*28/w)*3))
    return torch.tensor(out)
t0=time.time(); acc=[]
for step in range(int(sys.argv[1])):
    dv=decode_video(SUITE/paths[int(rng.integers(len(paths)))]); f=[4,8,16][int(rng.integers(3))]; s=[56,84,112][int(rng.integers(3))]
    idx=segment_indices(dv.num_frames,f,None); h,w=frame_size(120,160,s)
    inp=process_video(p,resize_frames(dv.frames[idx],(h,w)),fps=dv.fps,indices=idx)
    (tk,)=m.model.get_video_features(inp.pixel_values,inp.grid_thw,return_dict=True).pooler_output
    y=cells((f+1)//2,h,w); lo=head(tk); loss=torch.nn.functional.cross_entropy(lo,y)
    opt.zero_grad(); loss.backward(); opt.step(); acc.append(float((lo.argmax(1)==y).float().mean()))
    if (step+1)%50==0: print(step+1, round(float(np.mean(acc)),3), f"{time.time()-t0:.0f}s", flush=True); acc=[]
